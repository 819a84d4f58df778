"""Writes the kernel's logos (run once; the outputs are committed): a dark tile with
timeline bars, the picture Bach draws for every evaluation."""
import struct
import zlib

BG = (32, 38, 56)
BARS = [((0.14, 0.30), (0.10, 0.55), (86, 180, 233)),   # cpu lane
        ((0.40, 0.56), (0.35, 0.90), (230, 159, 0)),    # accelerator lane
        ((0.66, 0.82), (0.20, 0.70), (0, 158, 115))]    # transfer lane


def png(size):
    rows = []
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            c = BG
            for (y0, y1), (x0, x1), col in BARS:
                if y0 * size <= y < y1 * size and x0 * size <= x < x1 * size:
                    c = col
            row += bytes(c) + b"\xff"
        rows.append(bytes(row))
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


for s in (32, 64):
    with open(f"logo-{s}x{s}.png", "wb") as f:
        f.write(png(s))

rects = "".join(
    f'<rect x="{x0*64:.1f}" y="{y0*64:.1f}" width="{(x1-x0)*64:.1f}" height="{(y1-y0)*64:.1f}" fill="rgb{col}"/>'
    for (y0, y1), (x0, x1), col in BARS)
with open("logo-svg.svg", "w") as f:
    f.write(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="8" fill="rgb{BG}"/>{rects}</svg>\n')

"""Build and run every original of the library suite with plain ndarray 0.16, outside the
kernel, and compare their stdout with `expected/` (or record it there with `--write`).

    python tests/library_suite/check_originals.py [--write] [--dir DIR] [--target-dir DIR] [cases...]

All cases go into one scratch cargo project (one `fn case_<name>() { <case> }` each, and a
`main` that runs them in turn, catching panics), so that they compile in a single build. The
project is edition 2024, as the kernel compiles cells. Needs ndarray 0.16 reachable by cargo
(it runs `cargo build --offline` first and falls back to an online build).
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE / "cases"
EXPECTED = HERE / "expected"

CARGO_TOML = """[package]
name = "libsuite-check"
version = "0.1.0"
edition = "2024"

[dependencies]
ndarray = "0.16"
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="record the outputs in expected/")
    ap.add_argument("--dir", default="/tmp/libsuite-check", help="scratch cargo project")
    ap.add_argument("--target-dir", default="/tmp/libsuite-target", help="CARGO_TARGET_DIR")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args(argv)

    names = args.cases or [p.stem for p in sorted(CASES.glob("*.rs"))]
    project = pathlib.Path(args.dir)
    (project / "src").mkdir(parents=True, exist_ok=True)
    (project / "Cargo.toml").write_text(CARGO_TOML)
    src = ["#![allow(unused, non_snake_case, non_camel_case_types, dead_code, deprecated)]", "use std::io::Write;"]
    for n in names:
        src.append(f"fn case_{n}() {{\n{(CASES / f'{n}.rs').read_text()}\n}}")
    src.append("fn main() {")
    for n in names:
        src.append(f'    println!("=====CASE {n}"); std::io::stdout().flush().unwrap();')
        src.append(f'    if std::panic::catch_unwind(|| case_{n}()).is_err() {{ println!("=====PANIC {n}"); }}')
    src.append("}")
    (project / "src" / "main.rs").write_text("\n".join(src) + "\n")

    env = dict(os.environ, CARGO_TARGET_DIR=args.target_dir)
    build = subprocess.run(["cargo", "build", "--offline", "-q"], cwd=project, env=env, capture_output=True, text=True)
    if build.returncode != 0:
        build = subprocess.run(["cargo", "build", "-q"], cwd=project, env=env, capture_output=True, text=True)
    if build.returncode != 0:
        print(build.stderr[-20000:])
        return 1
    run = subprocess.run([str(pathlib.Path(args.target_dir) / "debug" / "libsuite-check")], capture_output=True, text=True, timeout=900)
    parts = re.split(r"^=====CASE (\S+)\n", run.stdout, flags=re.M)
    bad = 0
    for i in range(1, len(parts), 2):
        name, text = parts[i], parts[i + 1]
        status = "ok"
        if "=====PANIC" in text:
            text = text.split("=====PANIC")[0]
            status = "panicked"
            bad += 1
        exp = EXPECTED / f"{name}.txt"
        if args.write:
            exp.write_text(text)
        elif not exp.exists() or exp.read_text() != text:
            status = "differs from expected" if status == "ok" else status
            bad += status != "panicked"
        print(f"{name:<32} {status}")
    print(f"{len(parts) // 2} cases, {bad} not ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

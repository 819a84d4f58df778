//! The cells' link without the C compiler's driver.
//!
//! rustc links a cell's library by running `cc`, which runs `collect2`, which runs the
//! toolchain's `ld.lld` stand-in, which runs `rust-lld`: four programs started for one link,
//! about 10 ms of a trivial cell's 40 ms link on the 2-core machine. What `cc` adds to the
//! arguments is fixed for a session: its own options in front, the C runtime's start files
//! (`crti.o`, `crtbeginS.o`) after the output, its library directories after the caller's,
//! the end files (`crtendS.o`, `crtn.o`) last. So the first link of a session asks `cc` what
//! it would run (`cc -###`), keeps those parts (the *frame*) beside the library, and every
//! link runs `rust-lld` itself with the frame around the arguments rustc gave, translated as
//! `cc` translates them (`-Wl,a,b` is `a b`, `-L` goes up front). The C runtime's files are
//! linked exactly as `cc` links them.
//!
//! The first link checks the translation: the arguments, translated, must appear in `cc`'s
//! own command in one piece, or no frame is kept and `cc` links every time, as does any link
//! whose arguments hold an option the translation does not know, or whose driver options
//! differ from the frame's. `BACH_CELL_LINK=cc` turns it off.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `BACH_CELL_LINK=cc`: always link through `cc`.
const CHOICE_ENV: &str = "BACH_CELL_LINK";
/// The frame, beside the library the link writes.
const FRAME_FILE: &str = "bach-cell-link.json";

/// `cc`'s arguments (rustc's for a cell) as the linker takes them.
#[derive(Debug, PartialEq)]
struct Translated {
    /// `-L` directories (the caller's, then `-B`'s), which `cc` puts in front of its own.
    dirs: Vec<String>,
    /// Everything else for the linker, in order.
    body: Vec<String>,
    /// The library written (`-o`).
    out: String,
    /// The options only the driver reads (`-shared`, `-m64`, `-fuse-ld=lld`, `-B..`): a frame
    /// is for one set of them.
    driver: Vec<String>,
    /// `-B`'s directory, where `cc` finds `ld.lld`.
    tools: Option<String>,
}

/// What `cc` puts around the translated arguments, for one set of driver options.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Frame {
    driver: Vec<String>,
    /// The linker `cc` ends up running (`rust-lld`), and its first arguments (`-flavor gnu`).
    linker: Vec<String>,
    /// Before `-o`.
    head: Vec<String>,
    /// After the output, before the directories (the start files).
    start: Vec<String>,
    /// `cc`'s own directories, after the caller's.
    own_dirs: Vec<String>,
    /// After the body (the end files).
    end: Vec<String>,
}

/// The linker's command for these arguments of `linker` (rustc's `cc`), when it can be run
/// without the driver; `None`: run the driver.
pub fn direct_command(linker: &OsStr, args: &[OsString]) -> Option<Command> {
    if std::env::var(CHOICE_ENV).is_ok_and(|v| v == "cc") {
        return None;
    }
    let name = Path::new(linker).file_name()?.to_str()?;
    if name != "cc" && name != "gcc" {
        return None;
    }
    let args: Vec<String> = args.iter().map(|a| a.to_str().map(str::to_owned)).collect::<Option<_>>()?;
    let t = translate(&args)?;
    let frame_path = Path::new(&t.out).parent()?.join(FRAME_FILE);
    let kept = std::fs::read(&frame_path).ok().and_then(|b| serde_json::from_slice::<Frame>(&b).ok());
    let frame = match kept {
        // For these driver options, and the files it names still there (not a compiler
        // upgraded since).
        Some(f) if f.driver == t.driver && f.linker.iter().take(1).chain(&f.start).chain(&f.end).all(|p| Path::new(p).exists()) => f,
        _ => {
            let f = frame_of(linker, &args, &t)?;
            let _ = std::fs::write(&frame_path, serde_json::to_vec(&f).ok()?);
            f
        }
    };
    let mut cmd = Command::new(&frame.linker[0]);
    cmd.args(&frame.linker[1..]).args(&frame.head).arg("-o").arg(&t.out).args(&frame.start).args(&t.dirs).args(&frame.own_dirs).args(&t.body).args(&frame.end);
    Some(cmd)
}

/// Drops the frame kept beside the library these arguments write (a direct link failed: the
/// next link asks `cc` again).
pub fn forget_frame(args: &[OsString]) {
    let out = args.iter().skip_while(|a| *a != "-o").nth(1);
    if let Some(dir) = out.and_then(|o| Path::new(o).parent()) {
        let _ = std::fs::remove_file(dir.join(FRAME_FILE));
    }
}

/// `cc`'s arguments translated as `cc` translates them for the linker; `None` for an option
/// it does not know (the driver then links).
fn translate(args: &[String]) -> Option<Translated> {
    let mut t = Translated { dirs: vec![], body: vec![], out: String::new(), driver: vec![], tools: None };
    let mut b_dirs = vec![];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => t.out = it.next()?.clone(),
            "-L" => t.dirs.push(format!("-L{}", it.next()?)),
            "-B" => {
                let d = it.next()?.clone();
                t.driver.push(format!("-B{d}"));
                b_dirs.push(d);
            }
            "-Xlinker" => t.body.push(it.next()?.clone()),
            "-shared" | "-m64" | "-nodefaultlibs" | "-fuse-ld=lld" => t.driver.push(a.clone()),
            _ if a.starts_with("-Wl,") => t.body.extend(a["-Wl,".len()..].split(',').map(str::to_owned)),
            _ if a.starts_with("-L") => t.dirs.push(a.clone()),
            _ if a.starts_with("-B") => {
                t.driver.push(a.clone());
                b_dirs.push(a[2..].to_owned());
            }
            _ if a.starts_with("-l") => t.body.push(a.clone()),
            _ if a.starts_with('-') || a.starts_with('@') => return None,
            _ => t.body.push(a.clone()),
        }
    }
    // A library with lld, as rustc links cells; anything else goes through the driver.
    if t.out.is_empty() || !t.driver.iter().any(|d| d == "-shared") || !t.driver.iter().any(|d| d == "-fuse-ld=lld") {
        return None;
    }
    t.tools = b_dirs.first().cloned();
    t.dirs.extend(b_dirs.iter().map(|d| format!("-L{d}")));
    Some(t)
}

/// The frame of `cc`'s command for `args` (translated `t`): `cc -###` says what it would run;
/// its linker must be the toolchain's `rust-lld` (behind `-B`'s `ld.lld`), and `t` must be in
/// it in one piece.
fn frame_of(cc: &OsStr, args: &[String], t: &Translated) -> Option<Frame> {
    let out = Command::new(cc).arg("-###").args(args).env("LC_ALL", "C").output().ok()?;
    let said = String::from_utf8(out.stderr).ok()?;
    let words = said.lines().map(split_quoted).find(|w| w.first().is_some_and(|p| p.ends_with("/collect2")))?;
    let rust_lld = rust_lld(t.tools.as_deref()?)?;
    frame_from(&words[1..], t, vec![rust_lld.to_str()?.to_owned(), "-flavor".into(), "gnu".into()])
}

/// `collect2`'s arguments (`words`) cut around `t`. The gcc LTO plugin's options and
/// `-fuse-ld` are collect2's own (lld ignores the first and never sees the second).
fn frame_from(words: &[String], t: &Translated, linker: Vec<String>) -> Option<Frame> {
    let mut w = vec![];
    let mut it = words.iter();
    while let Some(a) = it.next() {
        if a == "-plugin" {
            it.next()?;
        } else if !(a.starts_with("-plugin-opt") || a.starts_with("-fuse-ld=")) {
            w.push(a.clone());
        }
    }
    let o = w.iter().position(|a| a == "-o")?;
    if w.get(o + 1)? != &t.out || t.dirs.is_empty() {
        return None;
    }
    let d = find(&w, &t.dirs, o + 2)?;
    let b = find(&w, &t.body, d + t.dirs.len())?;
    Some(Frame {
        driver: t.driver.clone(),
        linker,
        head: w[..o].to_vec(),
        start: w[o + 2..d].to_vec(),
        own_dirs: w[d + t.dirs.len()..b].to_vec(),
        end: w[b + t.body.len()..].to_vec(),
    })
}

/// Where `part` first appears in `w` in one piece, from `from` on.
fn find(w: &[String], part: &[String], from: usize) -> Option<usize> {
    (from..=w.len().checked_sub(part.len())?).find(|&i| w[i..i + part.len()] == *part)
}

/// The `rust-lld` that `<tools>/ld.lld` (the toolchain's `gcc-ld` stand-in) runs.
fn rust_lld(tools: &str) -> Option<PathBuf> {
    let tools = Path::new(tools);
    let lld = tools.parent()?.join("rust-lld");
    (tools.join("ld.lld").exists() && lld.exists()).then_some(lld)
}

/// The words of a `cc -###` line: separated by spaces; a word with characters the shell
/// reads is in double quotes, with `\"` and `\\` escaped.
fn split_quoted(line: &str) -> Vec<String> {
    let mut words = vec![];
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ').is_some() {}
        let Some(first) = chars.next() else { break };
        let mut w = String::new();
        if first == '"' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => w.extend(chars.next()),
                    '"' => break,
                    _ => w.push(c),
                }
            }
        } else {
            w.push(first);
            while let Some(c) = chars.next_if(|c| *c != ' ') {
                w.push(c);
            }
        }
        words.push(w);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// rustc's arguments for a cell's library, shortened (two objects, two dylibs).
    fn rustc_args(out: &str, objs: &[&str]) -> Vec<String> {
        let mut a = s(&["-m64", "/t/rustcX/symbols.o"]);
        a.extend(s(objs));
        a.extend(s(&[
            "-Wl,--as-needed",
            "-Wl,-Bdynamic",
            "/t/deps/libbach-1.so",
            "/sys/lib/libstd-2.so",
            "-lgcc_s",
            "-lc",
            "-L",
            "/t/rustcX/raw-dylibs",
            "-B/sys/bin/gcc-ld",
            "-fuse-ld=lld",
            "-Wl,--eh-frame-hdr",
            "-L",
            "/sys/lib",
            "-o",
            out,
            "-Wl,--gc-sections",
            "-shared",
            "-Wl,-rpath,$ORIGIN/,--enable-new-dtags,-z,origin",
            "-nodefaultlibs",
            "-Wl,-z,norelro",
        ]));
        a
    }

    /// What gcc 12's `cc -###` runs for them (its collect2 line, unquoted).
    fn collect2(out: &str, objs: &[&str]) -> Vec<String> {
        let mut w = s(&[
            "-plugin",
            "/usr/lib/gcc/x86_64-linux-gnu/12/liblto_plugin.so",
            "-plugin-opt=-fresolution=/tmp/cc1.res",
            "--build-id",
            "--eh-frame-hdr",
            "-m",
            "elf_x86_64",
            "--hash-style=gnu",
            "--as-needed",
            "-shared",
            "-fuse-ld=lld",
            "-o",
            out,
            "/usr/lib/x86_64-linux-gnu/crti.o",
            "/usr/lib/gcc/x86_64-linux-gnu/12/crtbeginS.o",
            "-L/t/rustcX/raw-dylibs",
            "-L/sys/lib",
            "-L/sys/bin/gcc-ld",
            "-L/usr/lib/gcc/x86_64-linux-gnu/12",
            "-L/usr/lib/x86_64-linux-gnu",
            "/t/rustcX/symbols.o",
        ]);
        w.extend(s(objs));
        w.extend(s(&[
            "--as-needed",
            "-Bdynamic",
            "/t/deps/libbach-1.so",
            "/sys/lib/libstd-2.so",
            "-lgcc_s",
            "-lc",
            "--eh-frame-hdr",
            "--gc-sections",
            "-rpath",
            "$ORIGIN/",
            "--enable-new-dtags",
            "-z",
            "origin",
            "-z",
            "norelro",
            "/usr/lib/gcc/x86_64-linux-gnu/12/crtendS.o",
            "/usr/lib/x86_64-linux-gnu/crtn.o",
        ]));
        w
    }

    #[test]
    fn a_frame_cut_from_ccs_command_gives_ccs_command_for_the_next_cell_without_its_plugin() {
        let first = translate(&rustc_args("/t/deps/libctx.so", &["/t/ctx.a.o", "/t/ctx.b.o"])).expect("known options");
        assert_eq!(first.tools.as_deref(), Some("/sys/bin/gcc-ld"));
        assert_eq!(first.dirs, s(&["-L/t/rustcX/raw-dylibs", "-L/sys/lib", "-L/sys/bin/gcc-ld"]));
        let frame = frame_from(&collect2("/t/deps/libctx.so", &["/t/ctx.a.o", "/t/ctx.b.o"]), &first, s(&["rust-lld", "-flavor", "gnu"])).expect("in one piece");
        assert_eq!(frame.start, s(&["/usr/lib/x86_64-linux-gnu/crti.o", "/usr/lib/gcc/x86_64-linux-gnu/12/crtbeginS.o"]));
        assert_eq!(frame.end, s(&["/usr/lib/gcc/x86_64-linux-gnu/12/crtendS.o", "/usr/lib/x86_64-linux-gnu/crtn.o"]));
        assert_eq!(frame.own_dirs, s(&["-L/usr/lib/gcc/x86_64-linux-gnu/12", "-L/usr/lib/x86_64-linux-gnu"]));
        // The next cell (three objects, another output): the frame around its arguments is
        // cc's own command, less the plugin's options and -fuse-ld.
        let next = translate(&rustc_args("/t/deps/libctx2.so", &["/t/c.1.o", "/t/c.2.o", "/t/c.3.o"])).unwrap();
        let mut built = frame.head.clone();
        built.extend(s(&["-o", &next.out]));
        built.extend(
            frame.start.iter().cloned().chain(next.dirs.iter().cloned()).chain(frame.own_dirs.iter().cloned()).chain(next.body.iter().cloned()).chain(frame.end.iter().cloned()),
        );
        let expected: Vec<String> = collect2("/t/deps/libctx2.so", &["/t/c.1.o", "/t/c.2.o", "/t/c.3.o"])
            .into_iter()
            .filter(|w| !w.starts_with("-plugin") && !w.contains("lto_plugin") && w != "-fuse-ld=lld")
            .collect();
        assert_eq!(built, expected);
    }

    #[test]
    fn an_option_it_does_not_know_or_a_piece_not_found_leaves_the_link_to_cc() {
        let mut args = rustc_args("/t/deps/libctx.so", &["/t/a.o"]);
        args.push("-static-libgcc".into());
        assert_eq!(translate(&args), None);
        // Not a library, or not lld.
        let args: Vec<String> = rustc_args("/t/deps/libctx.so", &["/t/a.o"]).into_iter().filter(|a| a != "-shared").collect();
        assert_eq!(translate(&args), None);
        let args: Vec<String> = rustc_args("/t/deps/libctx.so", &["/t/a.o"]).into_iter().filter(|a| a != "-fuse-ld=lld").collect();
        assert_eq!(translate(&args), None);
        // cc's command reorders the body (a driver this translation does not describe).
        let t = translate(&rustc_args("/t/deps/libctx.so", &["/t/a.o"])).unwrap();
        let mut w = collect2("/t/deps/libctx.so", &["/t/a.o"]);
        let i = w.iter().position(|x| x == "-lc").unwrap();
        w.swap(i, i - 1);
        assert_eq!(frame_from(&w, &t, s(&["rust-lld"])), None);
    }

    #[test]
    fn ccs_quoted_words_are_read_with_their_escapes() {
        assert_eq!(
            split_quoted(r#" /usr/lib/collect2 -plugin "-plugin-opt=x" -o  "a \"b\"" "c\\d" e"#),
            s(&["/usr/lib/collect2", "-plugin", "-plugin-opt=x", "-o", "a \"b\"", "c\\d", "e"])
        );
    }
}

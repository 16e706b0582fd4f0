"""Runs clang-tidy over the project's sources in parallel, skipping files unchanged since they last
passed. Called by scripts/tidy (see there)."""
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path.cwd()
BUILD = ROOT / os.environ.get("FIELDLINE_BUILD_DIR", "build")
MODULES = ("api", "core", "drivers", "filter", "pipeline", "sandbox", "storage")
TIDY = "clang-tidy-14"
CACHE = Path(os.environ.get("FIELDLINE_TIDY_CACHE", Path.home() / ".cache" / "fieldline-tidy"))
JOBS = int(os.environ.get("FIELDLINE_JOBS", "2"))


def tidy_command(command: str) -> str:
    """The build's compile command, made readable for clang: GCC's precompiled header and its
    GCC-only warning switches go (clang-tidy checks the code, not the build's warning policy)."""
    command = re.sub(r" -include \S+cmake_pch\.hxx", "", command)
    command = re.sub(r" -Winvalid-pch", "", command)
    command = re.sub(r" -Werror\S*", "", command)
    return re.sub(r" -Wno-error=\S+", "", command)


def ninja_deps() -> dict:
    """Object file -> the files it was compiled from (ninja keeps them from the compiler)."""
    out = subprocess.run(["ninja", "-C", str(BUILD), "-t", "deps"], capture_output=True, text=True, check=True).stdout
    deps, current = {}, None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            current = line.split(":", 1)[0]
            deps[current] = []
        elif line.strip() and current:
            deps[current].append(line.strip())
    return deps


def fingerprint(entry, deps, config: bytes, version: bytes) -> str:
    """What a file's verdict depends on, with the checkout's own path taken out: another clone of
    the same sources (CI's) finds the verdicts this one stored, as ccache does (CCACHE_BASEDIR)."""
    root = str(ROOT)
    h = hashlib.sha256(config + version + entry["command"].replace(root, "<root>").encode())
    paths = {((BUILD / dep) if not dep.startswith("/") else Path(dep)).resolve() for dep in deps}
    named = sorted((str(p).replace(root, "<root>").encode(), p) for p in paths)
    for name, path in named:
        if str(path).startswith("/usr/"):
            continue  # system headers change with the machine's packages, and so does clang-tidy's version
        try:
            h.update(name + path.read_bytes())
        except OSError:
            h.update(name + b"(missing)")
    return h.hexdigest()


# A finding's location. Path-sensitive analyzer checks may end a path inside a library header
# (clang 14's analyzer misreads Boost.Asio's coroutine frames: null dereferences in awaitable.hpp
# and any_executor.hpp); only findings located in the project's own files count.
DIAGNOSTIC = re.compile(r"^(/[^:\n]+):\d+:\d+: (?:warning|error): ", re.M)


def is_ours(path: str) -> bool:
    try:
        return Path(path).resolve().relative_to(ROOT).parts[0] in MODULES
    except ValueError:
        return False


def main(argv):
    db = json.loads((BUILD / "compile_commands.json").read_text())
    wanted = {str((ROOT / a).resolve()) for a in argv}
    everything = []
    for e in db:
        rel = Path(e["file"]).resolve().relative_to(ROOT) if e["file"].startswith(str(ROOT)) else None
        if rel is None or rel.parts[0] not in MODULES:
            continue
        everything.append(dict(e, command=tidy_command(e["command"])))
    # The database always lists every file: a run for a few files must not take the others' commands
    # away from a run still going.
    tidy_dir = BUILD / "tidy"
    tidy_dir.mkdir(exist_ok=True)
    (tidy_dir / "compile_commands.json").write_text(json.dumps(everything))
    entries = [e for e in everything if not wanted or str(Path(e["file"]).resolve()) in wanted]

    deps = ninja_deps()
    config = (ROOT / ".clang-tidy").read_bytes()
    version = subprocess.run([TIDY, "--version"], capture_output=True, check=True).stdout
    CACHE.mkdir(parents=True, exist_ok=True)
    header_filter = "^" + re.escape(str(ROOT)) + "/(" + "|".join(MODULES) + ")/"

    to_check = []
    for e in entries:
        argv = shlex.split(e["command"])
        obj = e.get("output") or argv[argv.index("-o") + 1]
        # Without ninja's list of the headers it read (not built yet), a verdict could not notice a
        # header change: such a file is checked and its verdict not kept.
        key = fingerprint(e, deps[obj], config, version) if obj in deps else None
        if key is None or not (CACHE / key).exists():
            to_check.append((e["file"], key))
    print(f"clang-tidy: {len(entries)} files, {len(entries) - len(to_check)} unchanged since they passed, "
          f"{len(to_check)} to check", flush=True)

    def check(item):
        file, key = item
        r = subprocess.run([TIDY, "-p", str(tidy_dir), "--quiet", "--header-filter", header_filter, file],
                           capture_output=True, text=True)
        findings = "\n".join(l for l in (r.stdout + r.stderr).splitlines()
                             if not re.match(r"^\d+ warnings? (and \d+ errors? )?generated\.$", l)
                             and not l.startswith("Suppressed ") and "Use -header-filter" not in l
                             and "-system-headers to display" not in l)
        ours = [m for m in DIAGNOSTIC.finditer(findings) if is_ours(m.group(1))]
        theirs = [m for m in DIAGNOSTIC.finditer(findings) if not is_ours(m.group(1))]
        if not ours and (r.returncode == 0 or theirs):
            if key:
                (CACHE / key).touch()
            return file, None
        return file, findings or f"clang-tidy exited {r.returncode}"

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        for done, (file, problem) in enumerate(pool.map(check, to_check), 1):
            if problem:
                failed += 1
                print(f"--- {Path(file).relative_to(ROOT)}\n{problem}", flush=True)
            if sys.stdout.isatty():
                print(f"\rclang-tidy: {done} of {len(to_check)}", end="", flush=True)
    if sys.stdout.isatty():
        print()
    if failed:
        print(f"clang-tidy: {failed} of {len(entries)} files have findings (warnings are errors)")
        return 1
    print(f"clang-tidy: {len(entries)} files clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

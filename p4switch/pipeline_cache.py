"""An on-disk cache of compiled device configs, so that each switch process of a fabric does not compile
`p4ina.p4` again (about 2 s of CPU per switch per run on this machine).

An entry holds what the switch's own compiler produced (generated module, P4Info, runtime data), keyed by a
fingerprint of the compiler's source files, the program's SHA-256 and its name. The directory is private: the
cache is used only if it is a real directory owned by this user with no group or other permissions, and an entry
only if it is a regular file owned by this user with mode 0600 (written to a temporary file, then renamed). A
module read back is audited again before it runs (`codegen.audit`). `P4INA_PIPELINE_CACHE=off` disables it;
`P4INA_PIPELINE_CACHE=DIR` moves it (default `$XDG_CACHE_HOME/p4ina/pipelines`, else `~/.cache/...`); it keeps the
newest `MAX_ENTRIES` entries.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

ENV = "P4INA_PIPELINE_CACHE"
MAX_ENTRIES = 64  # the oldest entries beyond this are removed when one is added
_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def compiler_fingerprint() -> str:
    """SHA-256 over the compiler's sources: a changed front end or code generator never reads an old entry."""
    return sources_digest([*(_PACKAGE / "frontend").rglob("*.py"), *(_PACKAGE / "codegen").rglob("*.py"),
                           _PACKAGE / "compiler.py", _PACKAGE / "p4info.py"])


def sources_digest(files: list[Path], seed: str = "") -> str:
    """SHA-256 over `seed` and p4switch source files (each by its path in the package and its bytes), sorted."""
    digest = hashlib.sha256(seed.encode())
    for path in sorted(files):
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_dir() -> Path | None:
    """The private cache directory (created 0700), or None when disabled or not safe to use."""
    setting = os.environ.get(ENV, "")
    if setting.lower() == "off":
        return None
    if setting:
        base = Path(setting)
    else:
        root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = Path(root) / "p4ina" / "pipelines"
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(base)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        return None
    return base


def _entry(base: Path, program_sha256: str, name: str) -> Path:
    from p4switch.codegen.vector import options_key

    key = hashlib.sha256(f"{compiler_fingerprint()}\0{options_key()}\0{program_sha256}\0{name}".encode()).hexdigest()
    return base / f"{key}.json"


def load(program_sha256: str, name: str) -> dict[str, Any] | None:
    """A cached entry {"python", "p4info" (bytes), "runtime_config"} if one exists and is trustworthy."""
    base = cache_dir()
    if base is None:
        return None
    entry = read_private_json(_entry(base, program_sha256, name))
    if not (isinstance(entry, dict) and isinstance(entry.get("python"), str)
            and isinstance(entry.get("p4info"), str) and isinstance(entry.get("runtime_config"), dict)):
        return None
    try:
        p4info = base64.b64decode(entry["p4info"])
    except ValueError:
        return None
    return {"python": entry["python"], "p4info": p4info, "runtime_config": entry["runtime_config"]}


def read_private_json(path: Path) -> Any:
    """The JSON in `path` if it is a regular file owned by this user with mode 0600 (no symlink followed), else
    None: what another user could have written is never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def store(program_sha256: str, name: str, python: str, p4info: bytes, runtime_config: dict[str, Any]) -> None:
    """Write an entry atomically with mode 0600; any failure just leaves the cache without it."""
    base = cache_dir()
    if base is None:
        return
    write_private_json(_entry(base, program_sha256, name), {
        "python": python, "p4info": base64.b64encode(p4info).decode(), "runtime_config": runtime_config})


def write_private_json(path: Path, value: Any) -> None:
    """Write `value` to `path` (in the cache directory) atomically with mode 0600, then keep the newest
    `MAX_ENTRIES` entries; any failure just leaves the cache without it."""
    data = json.dumps(value).encode()
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # mkstemp creates it 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _evict(path.parent)
    except OSError:
        return


def _evict(base: Path) -> None:
    entries = sorted(base.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-MAX_ENTRIES]:
        old.unlink(missing_ok=True)

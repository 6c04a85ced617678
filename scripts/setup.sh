#!/usr/bin/env bash
# One-shot set-up on Debian 12: system packages, then the project's virtual environment in .venv.
# Idempotent: reruns are cheap when nothing changed (a stamp keyed on pyproject.toml and this script).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

APT_PACKAGES=(
    mininet iproute2 ethtool tcpdump iputils-ping procps psmisc openssl openssh-server
    python3 python3-venv python3-dev gcc make
)

stamp="$VENV/.p4ina-setup-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then
    exit 0
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's python3 is the interpreter Mininet was packaged for.
if [ ! -x "$VENV/bin/python" ]; then
    /usr/bin/python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip setuptools wheel
"$VENV/bin/python" -m pip install -q -e ".[dev,torch]"

# Mininet (and other Debian-only Python packages) live in the system dist-packages. Expose only those packages,
# through symlinks in one folder listed last on the venv's path, so the venv's pinned packages keep precedence.
site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
sysdeb="$VENV/debian-packages"
mkdir -p "$sysdeb"
for pkg in mininet simgrid; do
    for cand in /usr/lib/python3/dist-packages/$pkg /usr/lib/python3/dist-packages/$pkg.py \
                /usr/lib/python3/dist-packages/$pkg.cpython-*.so; do
        [ -e "$cand" ] && ln -sfn "$cand" "$sysdeb/$(basename "$cand")"
    done
done
echo "$(cd "$sysdeb" && pwd)" > "$site/zz-p4ina-debian.pth"

# The project's own packages by plain path entries (the repository root, and mininet/ for p4fabric). A test folder
# named like a package (tests/unit/controller), which pytest may prepend to sys.path, can then never shadow it: a
# regular package anywhere on sys.path wins over a folder without __init__.py, wherever that folder stands.
printf '%s\n%s\n' "$(pwd)" "$(pwd)/mininet" > "$site/p4ina-source.pth"

"$VENV/bin/python" - <<'PY'
import mininet.net, p4ina
assert "dist-packages" in mininet.net.__file__ or "debian-packages" in mininet.net.__file__, mininet.net.__file__
PY
rm -f "$VENV"/.p4ina-setup-*
touch "$stamp"
echo "setup: ready ($VENV)"

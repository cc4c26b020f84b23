# runtime_sim stand-in: how torch_npu sees the simulated host it is installed in.
#
# Paths on the judged machine (/usr/local/Ascend/...) are mapped under the tree root,
# which is found from this file's location. Nothing here writes anywhere.
import os
import stat

_HERE = os.path.dirname(os.path.abspath(__file__))


def root():
    from torch_npu import _build_info

    path = _HERE
    for _ in range(_build_info.SITE_DEPTH + 1):
        path = os.path.dirname(path)
    return path


def on_host(path):
    """The file on this machine for a judged-machine path; symlinks resolve inside the tree."""
    base = root()
    parts = [p for p in path.split("/") if p and p != "."]
    resolved = []
    hops = 0
    while parts:
        name = parts.pop(0)
        if name == "..":
            if resolved:
                resolved.pop()
            continue
        candidate = os.path.join(base, *(resolved + [name]))
        if os.path.islink(candidate) and hops < 40:
            hops += 1
            target = os.readlink(candidate)
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p and p != "."] + parts
            continue
        resolved.append(name)
    return os.path.join(base, *resolved)


ELF_MACHINES = {"x86_64": 0x3E, "aarch64": 0xB7}


def machine():
    try:
        with open(on_host("/proc/sys/kernel/arch"), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _elf_machine(path):
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    return int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")


def find_library(soname):
    """Where the dynamic loader would find ``soname``: LD_LIBRARY_PATH, then the default dirs.

    Like ld.so, a library built for another machine is passed over, so an aarch64 toolkit
    on an x86_64 host ends in "cannot open shared object file".
    """
    want = ELF_MACHINES.get(machine() or "")
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d.startswith("/")]
    dirs += ["/lib64", "/usr/lib64", "/lib", "/usr/lib"]
    for d in dirs:
        candidate = on_host(d.rstrip("/") + "/" + soname)
        if os.path.isfile(candidate):
            found = _elf_machine(candidate)
            if want is not None and found is not None and found != want:
                continue
            return candidate
    return None


def library_tag(path, key):
    """A ``key=value`` tag the builder stored after the ELF header of a placeholder library."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(4096)
    except OSError:
        return None
    marker = (key + "=").encode()
    at = data.find(marker)
    if at < 0:
        return None
    end = data.find(b"\0", at)
    return data[at + len(marker): end if end >= 0 else None].decode("utf-8", "replace")


def _table(name):
    rows = []
    try:
        with open(on_host("/etc/" + name), encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("#"):
                    rows.append(line.split(":"))
    except OSError:
        pass
    return rows


def judged_user():
    """(uid, set of gids) of USER in the tree's passwd/group; root when unknown."""
    name = os.environ.get("USER") or "root"
    uid = gid = None
    for row in _table("passwd"):
        if len(row) > 3 and row[0] == name:
            uid, gid = int(row[2]), int(row[3])
    gids = set() if gid is None else {gid}
    for row in _table("group"):
        if len(row) > 3 and name in row[3].split(","):
            gids.add(int(row[2]))
    return (0 if uid is None and name == "root" else uid), gids


def can_open(path):
    """Whether the judged user may open a device node read-write (mode bits, as the kernel does)."""
    target = on_host(path)
    try:
        st = os.stat(target)
    except OSError:
        return False
    uid, gids = judged_user()
    if uid == 0:
        return True
    mode = stat.S_IMODE(st.st_mode)
    if uid is not None and st.st_uid == uid:
        bits = mode >> 6
    elif st.st_gid in gids:
        bits = mode >> 3
    else:
        bits = mode
    return bits & 6 == 6


def physical_devices():
    """Logical device ids the driver exposes: the /dev/davinci<N> nodes present."""
    ids = []
    for name in os.listdir(on_host("/dev")) if os.path.isdir(on_host("/dev")) else []:
        if name.startswith("davinci") and name[7:].isdigit():
            ids.append(int(name[7:]))
    return sorted(ids)


def visible_devices(total):
    """ASCEND_RT_VISIBLE_DEVICES as the runtime reads it: ascending ids, stop at the first bad one.

    Returns the list of usable ids, or None when the variable is set but yields no device.
    """
    raw = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    if raw is None:
        return list(range(total))
    picked = []
    for item in raw.split(","):
        if not item.isdigit():
            break
        value = int(item)
        if value >= total or (picked and value <= picked[-1]):
            break
        picked.append(value)
    return picked or None

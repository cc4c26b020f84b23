"""Which allocator setting to use, for which verdict, on which torch_npu.

The order: expandable segments first (if the
release line has them and they are not on already), then max_split_size_mb sized below
the failing request, with garbage_collection_threshold and a per-process memory fraction
for memory starved by PyTorch's own cache. The data (release lines, caveats, sources)
is ``data/alloc_conf.yaml``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..core.units import MiB
from ..errors import did_you_mean
from .errors import MemoryInputError

_DATA = Path(__file__).with_name("data") / "alloc_conf.yaml"
MAX_SPLIT_CAP_MB = 1024  # larger thresholds stop helping: the stranded size classes get split again
MAX_SPLIT_USEFUL_FROM = 40 * MiB  # below this, requests share 20 MiB segments: the option cannot help


@lru_cache(maxsize=1)
def load_options() -> Dict[str, Any]:
    import yaml  # lazy: only the oom verb needs it

    with open(_DATA, "r", encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@dataclass
class Advice:
    option: str
    setting: str
    env: str
    since: str
    status: str  # recommended | alternative | already_set | unsupported | not_for_this
    why: str
    supported: Optional[bool] = None  # on the torch_npu release line in question; None: unknown
    caveats: str = ""
    source: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"option": self.option, "setting": self.setting, "env": self.env, "since": self.since,
                "supported": self.supported, "status": self.status, "why": self.why,
                "caveats": self.caveats, "source": list(self.source)}


def parse_conf(value: Optional[str]) -> Dict[str, str]:
    """``"expandable_segments:True,max_split_size_mb:128"`` -> dict (bracketed lists kept whole)."""
    out: Dict[str, str] = {}
    if not value:
        return out
    for item in _top_level_items(value):
        key, _, val = item.strip().partition(":")
        if key:
            out[key.strip()] = val.strip()
    return out


def check_conf(value: str, what: str = "--alloc-conf") -> Dict[str, str]:
    """A PYTORCH_NPU_ALLOC_CONF value the user gave, parsed, or ``MemoryInputError`` (one line)
    when torch_npu would refuse it at start-up: a key no release line knows, or a key without
    ``:value``. Values are not judged here (the release line decides what it accepts)."""
    if not value.strip():
        raise MemoryInputError(f"{what}: empty; give the PYTORCH_NPU_ALLOC_CONF value, e.g. expandable_segments:True")
    known = list(load_options()["keys"])
    conf = parse_conf(value)
    items = [item.strip() for item in _top_level_items(value) if item.strip()]
    for item in items:
        key, colon, val = item.partition(":")
        key = key.strip()
        if key not in known:
            raise MemoryInputError(f"{what} {value}: {key!r} is not an allocator key of torch_npu; "
                                   f"{did_you_mean(key, known)}"
                                   f"known keys: {', '.join(known)}")
        if not colon or not val.strip():
            raise MemoryInputError(f"{what} {value}: {key} has no value (write it as {key}:VALUE)")
    return conf


def _top_level_items(value: str) -> List[str]:
    """``a:1,b:[x:2,y:3]`` -> ``["a:1", "b:[x:2,y:3]"]``: commas inside brackets stay."""
    depth, token, items = 0, "", []
    for ch in value:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            items.append(token)
            token = ""
        else:
            token += ch
    items.append(token)
    return items


def max_split_mb(requested: Optional[int]) -> Optional[int]:
    """A max_split_size_mb value for a failing request: the largest power of two up to a
    quarter of it, at most 1024 and above 20; None when the request is too small to help."""
    if requested is None or requested < MAX_SPLIT_USEFUL_FROM:
        return None
    mb = 32
    while mb * 2 <= min(requested // (4 * MiB), MAX_SPLIT_CAP_MB):
        mb *= 2
    return mb


@dataclass(frozen=True)
class ReleaseInfo:
    """What is known of the torch_npu release line: exactly (``--torch-npu``), or only a
    bound read from the message template (``).If`` means 26.0.0 or later, ``) If`` before it)."""

    text: str
    low: Optional[Any] = None  # compat_matrix Version: the line is at least this
    below: Optional[Any] = None  # the line is older than this
    exact: bool = False

    def has(self, since: str) -> Optional[bool]:
        """Whether a feature that arrived in ``since`` is there; None when unknown."""
        from compat_matrix import parse_version

        v = parse_version(since, "torch_npu_release")
        if self.exact and self.low is not None:
            return self.low >= v
        if self.low is not None and self.low >= v:
            return True
        if self.below is not None and v >= self.below:
            return False
        return None


def release_from_text(version: str) -> ReleaseInfo:
    """``--torch-npu``: a wheel (2.1.0.post13), a branch or a release line. Raises ValueError."""
    from compat_matrix import resolve_torch_npu_release

    builds = [b for b in resolve_torch_npu_release(version) if b.release is not None]
    if not builds:
        raise ValueError(f"--torch-npu {version}: no torch_npu release matches it")
    return ReleaseInfo(f"{version}, release line {builds[0].release.text}", low=builds[0].release, exact=True)


def release_from_template(template: str) -> Optional[ReleaseInfo]:
    from compat_matrix import parse_version

    if template == "npu_26":
        return ReleaseInfo("26.0.0 or later, from the message format", low=parse_version("26.0.0", "torch_npu_release"))
    if template == "npu_pre26":
        return ReleaseInfo("before 26.0.0, from the message format", below=parse_version("26.0.0", "torch_npu_release"))
    return None


# options whose `since` is only the earliest release line read (may be older): an older
# line is "unknown", not "missing"
_EARLIEST_READ = ("5.0.rc3",)


def _supported(since: str, release: Optional[ReleaseInfo]) -> Optional[bool]:
    if release is None:
        return None
    has = release.has(since)
    return None if has is False and since in _EARLIEST_READ else has


@dataclass
class Plan:
    advice: List[Advice]
    fix_text: str
    commands: List[str]  # shell commands: settings to export, read-only look-ups
    code: List[str] = field(default_factory=list)  # lines to add to the program itself


def _fraction(flavor: str, release: Optional[ReleaseInfo], value: float, status: str, why: str) -> Advice:
    """The config key where the release line has it, else the Python call every line has."""
    frac = load_options()["options"]["per_process_memory_fraction"]
    caveats, source = " ".join(frac["caveats"].split()), list(frac["source"])
    if flavor == "npu" and _supported(frac["since"], release):
        return Advice("per_process_memory_fraction", frac["setting"].format(value=value), _env(flavor), frac["since"],
                      status, why, True, caveats, source)
    if flavor == "npu":
        return Advice("per_process_memory_fraction", frac["api"].format(value=value), "python", frac["api_since"],
                      status, why, _supported(frac["api_since"], release), caveats, source)
    return Advice("per_process_memory_fraction", f"torch.cuda.set_per_process_memory_fraction({value})", "python",
                  "any", status, why, None, caveats, source)


def _env(flavor: str) -> str:
    return load_options()["env"]["cuda" if flavor == "cuda" else "npu"]


def _merged(conf: Dict[str, str], setting: str, drop: List[str]) -> str:
    key = setting.split(":", 1)[0]
    parts = [f"{k}:{v}" for k, v in conf.items() if k not in drop and k != key]
    return ",".join([setting] + parts)


def plan_fragmentation(requested: Optional[int], flavor: str, release: Optional[ReleaseInfo], conf: Dict[str, str],
                       expandable_on: bool, expandable_refused: bool) -> Plan:
    opts = load_options()["options"]
    env = _env(flavor)
    exp, msplit, rp2 = opts["expandable_segments"], opts["max_split_size_mb"], opts["roundup_power2_divisions"]
    advice: List[Advice] = []
    commands: List[str] = []
    exp_supported = _supported(exp["since"], release) if flavor == "npu" else None
    if expandable_on:
        status, why = "already_set", "already on: the fragments are holes between live tensors that no page unmapping frees"
    elif expandable_refused:
        status, why = "unsupported", "the log says the driver refused it and torch_npu switched it off (needs HDK 23.0.0 or later)"
    elif exp_supported is False:
        status, why = "unsupported", f"this torch_npu release line predates {exp['since']}"
    else:
        status, why = "recommended", "lets freed pages between live tensors serve the failing request"
    advice.append(Advice("expandable_segments", exp["setting"], env, exp["since"], status, why, exp_supported,
                         " ".join(exp["caveats"].split()), list(exp["source"])))
    mb = max_split_mb(requested)
    ms_supported = _supported(msplit["since"], release) if flavor == "npu" else None
    if mb is None and requested is None:
        advice.append(Advice("max_split_size_mb", msplit["setting"].format(mb="N"), env, msplit["since"],
                             "unsupported" if ms_supported is False else "alternative",
                             "with N in MB below the size of the allocation that fails (the message's Tried to "
                             "allocate), so blocks of that size class stay whole", ms_supported,
                             " ".join(msplit["caveats"].split()), list(msplit["source"])))
    elif mb is None:
        advice.append(Advice("max_split_size_mb", msplit["setting"].format(mb="N"), env, msplit["since"], "not_for_this",
                             "the failing request is too small for a split threshold to keep it whole", ms_supported,
                             " ".join(msplit["caveats"].split()), list(msplit["source"])))
    else:
        ms_status = "recommended" if status != "recommended" and not expandable_on else "alternative"
        why = f"{mb} MB is below the failing request, so blocks of its size class stay whole"
        if expandable_on:
            why += "; only with expandable_segments off (torch_npu refuses the two together)"
        if ms_supported is False:
            ms_status = "unsupported"
        advice.append(Advice("max_split_size_mb", msplit["setting"].format(mb=mb), env, msplit["since"], ms_status,
                             why, ms_supported, " ".join(msplit["caveats"].split()), list(msplit["source"])))
    rp2_supported = _supported(rp2["since"], release) if flavor == "npu" else None
    advice.append(Advice("roundup_power2_divisions", rp2["setting"].format(value=4), env, rp2["since"],
                         "unsupported" if rp2_supported is False else "alternative",
                         "when sizes drift (variable sequence lengths), rounding them to shared buckets lets blocks be reused",
                         rp2_supported, " ".join(rp2["caveats"].split()), list(rp2["source"])))
    for a in advice:
        if a.status == "recommended":
            drop = ["max_split_size_mb", "garbage_collection_threshold"] if a.option == "expandable_segments" else \
                ["expandable_segments"]
            commands.append(f"export {env}={_merged(conf, a.setting, drop)}")
    if expandable_on:
        text = ("Expandable segments are already on, so what remains are free holes pinned between long-lived "
                "tensors: allocate the largest shapes first (sort or bucket variable lengths, pad to a few sizes), "
                "pre-allocate buffers that grow (KV caches) instead of re-concatenating them, release the cache at "
                "phase boundaries, and leave head-room (lower the memory utilisation target).")
    else:
        text = ("Stop the cache from stranding memory in split segments: turn on expandable segments (or, where "
                "they are unavailable, keep blocks of the failing size class whole with max_split_size_mb); keep "
                "tensor shapes stable (bucket or pad variable lengths, grow buffers in place) and release the cache "
                "at phase boundaries.")
        if not commands and mb is not None:
            commands.append(f"export {env}={_merged(conf, msplit['setting'].format(mb=mb), ['expandable_segments'])}")
    return Plan(advice, text, commands)


def plan_external(flavor: str, release: Optional[ReleaseInfo], device: Optional[int], others: List[int],
                  same_process: Optional[bool]) -> Plan:
    """``same_process``: True when the memory is this job's own non-PyTorch use (HCCL buffers,
    workspaces), False when other processes hold it, None when the inputs cannot tell."""
    opts = load_options()["options"]
    frac, gc = opts["per_process_memory_fraction"], opts["garbage_collection_threshold"]
    commands = ["npu-smi info"] if flavor == "npu" else ["nvidia-smi"]
    if flavor == "npu" and device is not None:
        commands.append(f"npu-smi info -t usages -i {device}")
    dev_arg = f", {device}" if device is not None else ""
    for pid in others[:3]:
        commands.append(f"ps -o pid,user,etime,args -p {pid}")
    advice: List[Advice] = [_fraction(flavor, release, 0.9, "recommended" if same_process else "alternative",
                                      "caps PyTorch's cache so the other consumers on the device keep their share")]
    frac_supported = _supported(frac["since"], release) if flavor == "npu" else None
    if same_process is not False:
        gc_supported = _supported(gc["since"], release) if flavor == "npu" else None
        advice.append(Advice("garbage_collection_threshold", gc["setting"].format(value=0.8), _env(flavor), gc["since"],
                             "alternative", "with a fraction set, returns old whole free segments before the cap is hit",
                             gc_supported, " ".join(gc["caveats"].split()), list(gc["source"])))
    code: List[str] = []
    own = ("cap PyTorch's share with a per-process memory fraction, release the cache before the other consumer "
           "allocates, or shrink the other consumer (HCCL_BUFFSIZE, the framework's memory utilisation target)")
    others_text = ("find who holds it and stop it, give each worker its own device, or lower each worker's share "
                   "(memory utilisation target, memory fraction)")
    if same_process:
        text = ("The device is full of memory this job holds outside PyTorch's cache (HCCL buffers, workspaces, "
                "other libraries), or PyTorch's cache keeps memory from them: " + own + ".")
    elif same_process is False:
        text = ("Most of the device is held by other processes (another job or container, a leftover worker of an "
                "earlier run, several workers sharing one device): " + others_text + ".")
    else:
        text = ("Most of the device is held by memory PyTorch does not own. If npu-smi lists other processes on it, "
                + others_text + "; if it is this job's own non-PyTorch memory (HCCL buffers, other libraries), "
                + own + ".")
    if same_process or same_process is None:
        if flavor == "npu" and frac_supported:
            commands.append(f"export {_env(flavor)}={frac['setting'].format(value=0.9)}")
        elif flavor == "npu":
            code.append(f"torch_npu.npu.set_per_process_memory_fraction(0.9{dev_arg})  # at start-up, before the model loads")
        else:
            code.append(f"torch.cuda.set_per_process_memory_fraction(0.9{dev_arg})  # at start-up")
    return Plan(advice, text, commands, code)


def plan_capacity(rule: str, flavor: str, release: Optional[ReleaseInfo], device: Optional[int],
                  shortfall: Optional[int]) -> Plan:
    opts = load_options()["options"]
    frac = opts["per_process_memory_fraction"]
    dev = device if device is not None else 0
    advice: List[Advice] = []
    commands: List[str] = []
    code: List[str] = []
    if rule == "fraction_limit":
        frac_supported = _supported(frac["since"], release) if flavor == "npu" else None
        a = _fraction(flavor, release, 0.95, "recommended",
                      "the process's own cap is what ran out: raise it if the device has room")
        setting = a.setting
        advice.append(a)
        text = ("The per-process memory limit is full, not the device: raise the fraction (or remove it) if the "
                "device has room, or reduce what the process keeps alive.")
        commands.append(f"npu-smi info -t usages -i {dev}" if flavor == "npu" else "nvidia-smi")
        if frac_supported:
            commands.append(f"export {_env(flavor)}={setting}")
        elif flavor == "npu":
            code.append(f"torch_npu.npu.set_per_process_memory_fraction(0.95, {dev})  # where the current cap is set")
    elif rule == "free_covers_request":
        text = ("The device reported more free memory than the request, so the pool did not run out: look for a "
                "per-process memory limit, another allocator in the process, or a failing driver allocation in the "
                "device log around the same time.")
        commands.append("npu-smi info" if flavor == "npu" else "nvidia-smi")
    elif rule == "pressure":
        text = ("No failure yet, but the allocator reached the device limit and had to flush its cache (each flush "
                "synchronises the device and costs time): the job runs at the edge of capacity. Leave head-room "
                "(smaller batch, lower memory-utilisation target) and watch num_alloc_retries per step; a count "
                "that keeps growing comes before an out-of-memory.")
        module = "torch.npu" if flavor == "npu" else "torch.cuda"
        code.append(f"retries = {module}.memory_stats()[\"num_alloc_retries\"]  # log it every step")
    elif rule == "numbers_missing":
        text = ("The inputs do not say why: give the whole message (up to \"reserved in total by PyTorch\"), the log "
                "it came from (--file), or the statistics or a snapshot taken at the failure.")
        if flavor == "npu":
            commands.append("export OOM_SNAPSHOT_ENABLE=1 OOM_SNAPSHOT_PATH=./oom_snapshots")
    elif rule == "impossible_size":
        text = ("No device has that much memory: a tensor size was computed wrongly (a negative or overflowed "
                "dimension, garbage read as a shape). Check the shape of the tensor created at the failing line.")
    elif rule == "host_memory":
        text = "Pinned host memory ran out: reduce pinned buffers (DataLoader pin_memory, prefetch depth) or add host memory."
        commands.append("free -g")
    else:
        need = f" (at least {shortfall / (1 << 30):.2f} GiB more is needed at the failing step)" if shortfall else ""
        text = ("The tensors alive at the failure plus the request do not fit the device" + need + ": reduce batch "
                "size or sequence length, recompute activations (checkpointing), use lower precision, or shard the "
                "model over more devices (tensor/pipeline parallel, ZeRO).")
        if flavor == "npu":
            # torch_npu dumps a snapshot at the next OOM; ascend-doctor oom --snapshot reads it
            commands.append("export OOM_SNAPSHOT_ENABLE=1 OOM_SNAPSHOT_PATH=./oom_snapshots")
            code.append("print(torch.npu.memory_summary())  # in the except block around the failing step")
        else:
            code.append("print(torch.cuda.memory_summary())  # in the except block around the failing step")
    return Plan(advice, text, commands, code)

# Runs inside the target interpreter: report its version and the versions of the
# packages that matter, from package metadata only (nothing is imported).
import json
import os
import sys

WANTED = {
    "torch", "torch_npu", "torchvision", "torchaudio", "numpy", "vllm", "vllm_ascend",
    "mindspore", "mindie_llm", "deepspeed", "transformers", "apex", "triton_ascend", "sglang",
}


def norm(name):
    return name.lower().replace("-", "_").replace(".", "_")


def read_meta(path):
    name = version = None
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line:
                    break
                if line.startswith("Name:") and name is None:
                    name = line[5:].strip()
                elif line.startswith("Version:") and version is None:
                    version = line[8:].strip()
    except (OSError, IOError):
        pass
    return name, version


def scan():
    found = {}
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for item in names:
            if item.endswith(".dist-info"):
                meta = os.path.join(entry, item, "METADATA")
            elif item.endswith(".egg-info"):
                meta = os.path.join(entry, item, "PKG-INFO") if os.path.isdir(os.path.join(entry, item)) else os.path.join(entry, item)
            else:
                continue
            name, version = read_meta(meta)
            if not name:
                stem = item.rsplit(".", 1)[0]
                name, _, version = stem.partition("-")
            key = norm(name)
            if key in WANTED and key not in found:
                found[key] = {"version": version, "location": entry}
    return found


if __name__ == "__main__":  # run with -c; imported by ascend_doctor.probes.static_stack for WANTED
    print(json.dumps({
        "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
        "implementation": getattr(sys, "implementation", None) and sys.implementation.name,
        "executable": sys.executable,
        "packages": scan(),
    }))

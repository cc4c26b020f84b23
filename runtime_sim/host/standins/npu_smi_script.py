# runtime_sim stand-in for npu-smi on a simulated host.
#
# The builder fills OUTPUTS with what this host's npu-smi prints for each command line
# (rendered from the host's chips, driver and processes) and BEHAVIOUR with how it fails:
# "ok", "hang" (never returns, like an npu-smi stuck in the driver) or "fail" (every
# command prints FAILURE and exits with FAILURE_STATUS, as after a failed dcmi_init).
import sys
import time

BEHAVIOUR = "@@BEHAVIOUR@@"
FAILURE = "@@FAILURE@@"
FAILURE_STATUS = 0
OUTPUTS = {}
VERSION = "@@VERSION@@"
NOT_FOUND = "Command or option is not found.\n"


def main(argv):
    if BEHAVIOUR == "hang":
        while True:
            time.sleep(3600)
    if argv in (["-v"], ["--version"]):
        sys.stdout.write("npu-smi version: %s\n" % VERSION)
        return 0
    if BEHAVIOUR == "fail":
        sys.stdout.write(FAILURE)
        return FAILURE_STATUS
    key = " ".join(argv)
    if key in OUTPUTS:
        sys.stdout.write(OUTPUTS[key])
        return 0
    sys.stdout.write(NOT_FOUND)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run a module as ``python -m`` would and write this process's peak resident memory
(VmHWM, in kB) to $PEAK_FILE at exit.

ru_maxrss of a child is no use here: Linux carries the parent's high-water mark across
fork and exec, so a child of a large pytest worker would report the worker's size. VmHWM
belongs to the process's own address space, which exec makes new.
"""
import atexit
import os
import runpy
import sys


def _report() -> None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    with open(os.environ["PEAK_FILE"], "w") as out:
                        out.write(line.split()[1])
    except OSError:
        pass


atexit.register(_report)
module = sys.argv[1]
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name="__main__", alter_sys=True)

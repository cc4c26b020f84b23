# runtime_sim stand-in for the python3 of a simulated host.
#
# The builder prepends a shebang that starts this machine's interpreter in isolated mode
# without site (-IS), so only the standard library is importable; this script then puts
# the tree's site-packages on sys.path and runs the command line like python3 does
# (-c CODE, -m MODULE, SCRIPT, -V). Variables of the host user's environment (the tree's
# env file) that the caller did not set are applied first: the user's login shell would
# have them.
import os
import runpy
import sys

SITE_PACKAGES = "@@SITE_PACKAGES@@"  # relative to the tree root
ENV_FILE = "@@ENV_FILE@@"  # relative to the tree root
PYTHON_VERSION = "@@PYTHON_VERSION@@"  # the version this host's python3 reports
USAGE = "usage: python3 [option] ... [-c cmd | -m mod | file | -] [arg] ..."


def _root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _login_environment(root):
    path = os.path.join(root, ENV_FILE)
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.replace("export ", "", 1).strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        os.environ.setdefault(key, value)


def _pretend_version():
    # Reported, not real: set after the launcher's own imports, just before the user's code
    # runs, so a probe sees the host's Python while the standard library keeps working.
    from collections import namedtuple

    fields = namedtuple("version_info", "major minor micro releaselevel serial")
    major, minor, micro = (int(p) for p in PYTHON_VERSION.split("."))
    sys.version_info = fields(major, minor, micro, "final", 0)
    sys.version = "%s (simulated host)" % PYTHON_VERSION


def main(argv):
    root = _root()
    args = list(argv)
    use_site = True
    while args and args[0].startswith("-") and args[0] not in ("-", "-c", "-m"):
        opt = args.pop(0)
        if opt in ("-V", "--version"):
            sys.stdout.write("Python %s\n" % PYTHON_VERSION)
            return 0
        if opt == "-S":
            use_site = False
        elif opt in ("-I", "-E", "-s", "-B", "-u", "-q", "-O", "-OO"):
            pass
        elif opt in ("-X", "-W"):
            if args:
                args.pop(0)
        else:
            sys.stderr.write("Unknown option: %s\n%s\n" % (opt, USAGE))
            return 2
    _login_environment(root)
    if use_site:
        sys.path.append(os.path.join(root, SITE_PACKAGES))
    sys.executable = os.path.abspath(__file__)
    _pretend_version()
    if not args or args[0] == "-":
        sys.argv = [""] + args[1:]
        exec(compile(sys.stdin.read(), "<stdin>", "exec"), {"__name__": "__main__"})
        return 0
    if args[0] == "-c":
        if len(args) < 2:
            sys.stderr.write("Argument expected for the -c option\n")
            return 2
        sys.argv = ["-c"] + args[2:]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        return 0
    if args[0] == "-m":
        if len(args) < 2:
            sys.stderr.write("Argument expected for the -m option\n")
            return 2
        sys.argv = [args[1]] + args[2:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return 0
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
    runpy.run_path(args[0], run_name="__main__")
    return 0


def _run(argv):
    try:
        return main(argv)
    except SystemExit:
        raise
    except BaseException as exc:  # print what python3 would print, without this launcher's frames
        import traceback

        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
        return 1


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:]))

# runtime_sim stand-in for the `torch` package of a simulated host (not PyTorch).
#
# It carries what the doctor's probes touch: the version, device-module registration
# (torch._register_device_module, used by torch_npu), backend auto-loading through the
# `torch.backends` entry points (torch >= 2.5, with the real error text when a backend
# fails to load), and a small dense tensor so that one op can run on a device.
import os

from torch.version import __version__  # noqa: F401  (generated per host)

_device_modules = {}


def _version_tuple(text):
    parts = []
    for piece in text.split("+")[0].split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts[:3])


class dtype(object):
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


float32 = dtype("float32")
float16 = dtype("float16")
int64 = dtype("int64")


class device(object):
    def __init__(self, spec, index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        text = str(spec)
        if ":" in text:
            text, _, idx = text.partition(":")
            index = int(idx)
        known = ("cpu", "cuda", "meta") + tuple(_device_modules)
        if text not in known:
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
                "lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: "
                + str(spec)
            )
        self.type = text
        self.index = index

    def __repr__(self):
        return "device(type='%s'%s)" % (self.type, "" if self.index is None else ", index=%d" % self.index)

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)


def _shape_of(data):
    shape = []
    while isinstance(data, list):
        shape.append(len(data))
        data = data[0] if data else None
    return tuple(shape)


def _map(fn, a, b=None):
    if isinstance(a, list):
        return [_map(fn, x, None if b is None else (b[i] if isinstance(b, list) else b)) for i, x in enumerate(a)]
    return fn(a) if b is None else fn(a, b)


def _full(shape, value):
    if not shape:
        return value
    return [_full(shape[1:], value) for _ in range(shape[0])]


class Tensor(object):
    def __init__(self, data, dev=None, dt=float32):
        self._data = data
        self.device = dev or device("cpu")
        self.dtype = dt

    @property
    def shape(self):
        return _shape_of(self._data)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def _same_device(self, other):
        if isinstance(other, Tensor) and str(other.device) != str(self.device):
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, %s and %s!"
                % (self.device, other.device)
            )
        return other._data if isinstance(other, Tensor) else other

    def _launch(self):
        module = _device_modules.get(self.device.type)
        if module is not None:
            module._launch(self.device.index or 0)

    def __add__(self, other):
        self._launch()
        return Tensor(_map(lambda x, y: x + y, self._data, self._same_device(other)), self.device, self.dtype)

    def __mul__(self, other):
        self._launch()
        return Tensor(_map(lambda x, y: x * y, self._data, self._same_device(other)), self.device, self.dtype)

    __radd__ = __add__
    __rmul__ = __mul__

    def __matmul__(self, other):
        b = self._same_device(other)
        self._launch()
        a = self._data
        if len(_shape_of(a)) != 2 or len(_shape_of(b)) != 2 or len(a[0]) != len(b):
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%s and %s)" % (self.shape, _shape_of(b)))
        cols = list(zip(*b))
        return Tensor([[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a], self.device, self.dtype)

    def sum(self):
        def total(d):
            return sum(total(x) for x in d) if isinstance(d, list) else d

        self._launch()
        return Tensor(total(self._data), self.device, self.dtype)

    def item(self):
        if isinstance(self._data, list):
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar" % len(self._data))
        self._launch()
        return self._data

    def tolist(self):
        return self._data

    def to(self, target, *args, **kwargs):
        dev = device(target) if not isinstance(target, dtype) else self.device
        module = _device_modules.get(dev.type)
        if module is not None:
            dev = device(dev.type, module._to_device(dev.index))
        return Tensor(self._data, dev, self.dtype)

    def cpu(self):
        return Tensor(self._data, device("cpu"), self.dtype)

    def __repr__(self):
        suffix = "" if self.device.type == "cpu" else ", device='%s'" % self.device
        return "tensor(%r%s)" % (self._data, suffix)


def tensor(data, device=None, dtype=float32):
    t = Tensor(data, None, dtype)
    return t.to(device) if device is not None else t


def ones(*shape, **kwargs):
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return tensor(_full(tuple(shape), 1.0), kwargs.get("device"))


def zeros(*shape, **kwargs):
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return tensor(_full(tuple(shape), 0.0), kwargs.get("device"))


def _register_device_module(device_type, module):
    import sys

    if device_type in _device_modules:
        raise RuntimeError(
            "The runtime module of '%s' has already been registered with '%s'"
            % (device_type, _device_modules[device_type])
        )
    _device_modules[device_type] = module
    setattr(sys.modules[__name__], device_type, module)
    sys.modules[__name__ + "." + device_type] = module


def _import_device_backends():
    """Load the `torch.backends` entry points, as torch >= 2.5 does on import."""
    from importlib.metadata import entry_points

    try:
        backends = entry_points(group="torch.backends")
    except TypeError:  # Python 3.9: entry_points() takes no arguments
        backends = entry_points().get("torch.backends", [])
    for backend in backends:
        try:
            backend.load()()
        except Exception as err:
            raise RuntimeError(
                "Failed to load the backend extension: %s. You can disable extension auto-loading with "
                "TORCH_DEVICE_BACKEND_AUTOLOAD=0." % backend.name
            ) from err


if _version_tuple(__version__) >= (2, 5, 0) and os.getenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") == "1":
    _import_device_backends()

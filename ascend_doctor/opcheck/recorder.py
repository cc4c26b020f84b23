"""Record the ops a PyTorch program runs, on CPU, without an NPU (needs torch).

Two dispatch-mode layers work together:

- a kernel layer (a ``TorchDispatchMode``) sees every op that reaches backend dispatch, with
  its exact overload name (the keys of the op-support data), input dtypes and shapes, in
  forward and backward;
- a composite layer sits on PyTorch's pre-dispatch key (above autograd). It sees
  CompositeImplicit ops such as ``aten::matmul``, ``aten::linear`` or
  ``aten::scaled_dot_product_attention`` before PyTorch decomposes them, runs their
  decomposition itself and marks everything underneath as ``within`` them. torch_npu runs
  several such ops as one NPU kernel while CPU decomposes them, so without this layer a CPU
  trace would show CPU-only children (``_scaled_dot_product_flash_attention_for_cpu``) instead.

Ops with a CompositeExplicit kernel run that kernel on an NPU without a kernel of their
own. When some shipped release has no NPU kernel for such an op, the kernel layer runs the
composite kernel itself so that its children (``argmax`` -> ``argmax.out``) are recorded too.

``mode``: ``eager`` (real CPU tensors), ``fake`` (FakeTensorMode: tensors made inside the
block have shapes and dtypes but no storage; a 7B model records in seconds) or ``meta``
(``torch.device('meta')`` is the default device inside the block). With fake tensors,
device-dependent choices still follow the CPU; with meta, PyTorch's eager fast paths (e.g.
the eval-mode TransformerEncoderLayer) are not taken. Data-dependent ops (``nonzero``,
``.item()``) need ``eager``.
"""
from __future__ import annotations

import contextlib
import functools
import platform
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ascend_doctor import __version__
from ascend_doctor.opcheck.choices import Mode, values
from ascend_doctor.opcheck.manifest import KIND, SCHEMA, Manifest, OpContext, OpEntry

MODES = values(Mode)
MAX_DTYPE_SIGS = 8
MAX_SHAPE_SIGS = 4
# Metadata pseudo-ops and profiler bookkeeping that never become device kernels.
_SKIP_NAMESPACES = ("prim::", "prims::", "profiler::")
_DK = torch._C.DispatchKey
_has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
_DISPATCH_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CPU",
    "CUDA",
    "Meta",
)


class RecordError(RuntimeError):
    pass


@dataclass
class _Agg:
    op: str
    level: str
    calls: int = 0
    contexts: Dict[Tuple[str, ...], int] = field(default_factory=dict)
    dtypes: List[Tuple[str, ...]] = field(default_factory=list)
    shapes: List[List[Any]] = field(default_factory=list)
    phases: Set[str] = field(default_factory=set)
    first: int = 0  # order of the op's first call in the run


def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


def _shape(t: torch.Tensor) -> List[Any]:
    out: List[Any] = []
    for s in t.shape:
        try:
            out.append(int(s))
        except Exception:  # symbolic size
            out.append(str(s))
    return out


def _tensors(args: Sequence[Any], kwargs: Dict[str, Any]) -> Iterator[torch.Tensor]:
    for a in args:
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    yield b
    for a in kwargs.values():
        if isinstance(a, torch.Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, torch.Tensor):
                    yield b


@functools.lru_cache(maxsize=1)
def _always_on_npu() -> FrozenSet[str]:
    """Ops every shipped release runs with an NPU kernel: their children never matter."""
    from compat_matrix import op_support

    common: Optional[Set[str]] = None
    for rel in op_support.releases():
        sup = op_support.load_branch(rel.branch)
        have = {op for op in sup if sup.status(op).npu_kernel}
        common = have if common is None else common & have
    return frozenset(common or ())


class _Collector:
    def __init__(self) -> None:
        self.stack: List[str] = []
        self.aggs: Dict[str, _Agg] = {}
        self.seq = 0
        self._dispatch: Dict[str, List[str]] = {}
        self._current_node = getattr(torch._C, "_current_autograd_node", None)

    def dispatch_keys(self, name: str) -> List[str]:
        keys = self._dispatch.get(name)
        if keys is None:
            try:
                keys = [k for k in _DISPATCH_KEYS if _has_kernel(name, k)]
            except RuntimeError:
                keys = []
            self._dispatch[name] = keys
        return keys

    def add(self, name: str, level: str, args: Sequence[Any], kwargs: Dict[str, Any]) -> None:
        agg = self.aggs.get(name)
        if agg is None:
            agg = self.aggs[name] = _Agg(op=name, level=level, first=self.seq)
        elif level == "kernel":
            agg.level = "kernel"
        agg.calls += 1
        self.seq += 1
        within = tuple(self.stack)
        agg.contexts[within] = agg.contexts.get(within, 0) + 1
        if len(agg.dtypes) < MAX_DTYPE_SIGS or len(agg.shapes) < MAX_SHAPE_SIGS:
            tensors = list(_tensors(args, kwargs))
            sig = tuple(sorted({_dtype_name(t.dtype) for t in tensors}))
            if sig not in agg.dtypes and len(agg.dtypes) < MAX_DTYPE_SIGS:
                agg.dtypes.append(sig)
            if len(agg.shapes) < MAX_SHAPE_SIGS:
                shp = [_shape(t) for t in tensors]
                if shp not in agg.shapes:
                    agg.shapes.append(shp)
        if self._current_node is not None:
            agg.phases.add("backward" if self._current_node() is not None else "forward")

    def entries(self) -> List[OpEntry]:
        out = []
        for name in sorted(self.aggs):
            a = self.aggs[name]
            out.append(
                OpEntry(
                    op=name,
                    calls=a.calls,
                    level=a.level,
                    contexts=[OpContext(w, n) for w, n in sorted(a.contexts.items())],
                    dtypes=[list(s) for s in a.dtypes],
                    shapes=a.shapes,
                    phases=sorted(a.phases),
                    dispatch=self.dispatch_keys(name),
                    first=a.first,
                )
            )
        return out


class _KernelLayer(TorchDispatchMode):
    """Ops that reach backend dispatch; expands CompositeExplicit ops some release lacks."""

    def __init__(self, collector: _Collector, expand: Optional[FrozenSet[str]], fake: bool = False) -> None:
        super().__init__()
        self.c = collector
        self.fake = fake
        self._always = expand  # None: do not expand
        self._expand_key: Dict[str, Optional[Any]] = {}
        self.paused = False

    def _explicit_key(self, name: str) -> Optional[Any]:
        if name in self._expand_key:
            return self._expand_key[name]
        key = None
        if self._always is not None and name.startswith("aten::") and name not in self._always:
            if _has_kernel(name, "CompositeExplicitAutogradNonFunctional"):
                key = _DK.CompositeExplicitAutogradNonFunctional
            elif _has_kernel(name, "CompositeExplicitAutograd"):
                key = _DK.CompositeExplicitAutograd
        self._expand_key[name] = key
        return key

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
        kwargs = kwargs or {}
        if self.paused:
            return func(*args, **kwargs)
        name = func.name()
        if name.startswith(_SKIP_NAMESPACES):
            return func(*args, **kwargs)
        self.c.add(name, "kernel", args, kwargs)
        key = self._explicit_key(name)
        if key is None or name in self.c.stack:
            # A composite kernel that calls its own op again (detach, alias) has no new children.
            return func(*args, **kwargs)
        if self.fake:
            # A composite kernel run on fake tensors makes real meta tensors (its C++ code sees
            # the meta storage), so only its calls are recorded; the result comes from the
            # fake mode as usual. Mutating ops would apply twice: they are not expanded.
            if not func._schema.is_mutable:
                self.c.stack.append(name)
                try:
                    with self:
                        func._op_dk(key, *args, **kwargs)
                except Exception:
                    self._expand_key[name] = None
                finally:
                    self.c.stack.pop()
            return func(*args, **kwargs)
        self.c.stack.append(name)
        try:
            with self:
                return func._op_dk(key, *args, **kwargs)
        except Exception:
            # The composite kernel could not run here (e.g. a data-dependent op on fake
            # tensors); run the op as the CPU would and keep what was seen.
            self._expand_key[name] = None
        finally:
            self.c.stack.pop()
        return func(*args, **kwargs)


def _make_composite_layer(collector: _Collector, kernel: _KernelLayer):
    """The pre-dispatch layer. Built on PyTorch internals; returns None where they are missing."""
    try:
        from torch._ops import _pop_mode_from_pre_dispatch, _set_mode_pre_dispatch
        from torch._subclasses.schema_check_mode import SchemaCheckMode
    except ImportError:
        return None
    if not hasattr(_DK, "PreDispatch"):
        return None

    class _CompositeLayer(SchemaCheckMode):  # the pre-dispatch slot accepts this mode type
        def __init__(self) -> None:
            TorchDispatchMode.__init__(self, _dispatch_key=_DK.PreDispatch)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
            kwargs = kwargs or {}
            name = func.name()
            if kernel.paused or not _has_kernel(name, "CompositeImplicitAutograd"):
                return func(*args, **kwargs)
            collector.add(name, "composite", args, kwargs)
            collector.stack.append(name)
            _set_mode_pre_dispatch(self)  # nested composite ops are seen too
            try:
                return func._op_dk(_DK.CompositeImplicitAutograd, *args, **kwargs)
            except Exception:
                if func._schema.is_mutable:
                    raise
            finally:
                _pop_mode_from_pre_dispatch()
                collector.stack.pop()
            # The decomposition could not run here (e.g. on fake tensors); let PyTorch run the
            # op its own way: its parts are still seen by the kernel layer, without a parent.
            return func(*args, **kwargs)

    return _CompositeLayer()


class Recorder:
    """Result of ``record_ops``: ``manifest()`` / ``save(path)`` after (or during) the block."""

    def __init__(self, mode: str, composite: bool, explicit: bool, command: Optional[List[str]]) -> None:
        if mode not in MODES:
            raise RecordError(f"unknown recording mode {mode!r} (use one of {', '.join(MODES)})")
        self.mode = mode
        self.collector = _Collector()
        self._composite_wanted = composite
        self._explicit_wanted = explicit
        self.command = command
        self.composite_parents = False
        self.explicit_children = False
        self.error: Optional[str] = None
        self.seconds = 0.0
        self.fake_mode: Any = None
        self._kernel: Optional[_KernelLayer] = None

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Run something inside the block without recording it (e.g. loading weights)."""
        k = self._kernel
        if k is None:
            yield
            return
        before, k.paused = k.paused, True
        try:
            yield
        finally:
            k.paused = before

    @property
    def ops(self) -> Dict[str, int]:
        return {name: a.calls for name, a in self.collector.aggs.items()}

    def manifest(self) -> Manifest:
        recorded = {
            "torch": torch.__version__,
            "python": platform.python_version(),
            "mode": self.mode,
            "command": self.command,
            "complete": self.error is None,
            "error": self.error,
            "seconds": round(self.seconds, 3),
            "composite_parents": self.composite_parents,
            "explicit_children": self.explicit_children,
        }
        return Manifest(
            ops=self.collector.entries(),
            recorded=recorded,
            tool={"name": "ascend-doctor", "version": __version__, "kind": KIND, "schema": SCHEMA},
        )

    def save(self, path: str) -> None:
        self.manifest().save(path)


@contextlib.contextmanager
def record_ops(
    mode: str = "eager",
    composite: bool = True,
    explicit: bool = True,
    sdpa_math: bool = True,
    command: Optional[List[str]] = None,
) -> Iterator[Recorder]:
    """Record every op run inside the block.

    ``sdpa_math``: make CPU scaled_dot_product_attention take PyTorch's math path, which is
    the path an NPU without an SDPA kernel takes, instead of a CPU-only flash kernel.
    """
    rec = Recorder(mode, composite, explicit, command)
    stack = contextlib.ExitStack()
    t0 = time.perf_counter()
    with stack:
        if mode == "fake":
            from torch._subclasses.fake_tensor import FakeTensorMode

            rec.fake_mode = stack.enter_context(FakeTensorMode(allow_non_fake_inputs=True))
            # PyTorch's C++ decompositions run on fake tensors here touch their (absent) data
            # pointer and warn about it; nothing is read, so the warning is noise.
            stack.enter_context(warnings.catch_warnings())
            warnings.filterwarnings("ignore", message="Accessing the data pointer of FakeTensor")
        elif mode == "meta":
            stack.enter_context(torch.device("meta"))
        if sdpa_math:
            stack.enter_context(_sdpa_math_only())
        expand = _always_on_npu() if explicit else None
        kernel = _KernelLayer(rec.collector, expand, fake=mode == "fake")
        rec._kernel = kernel
        rec.explicit_children = expand is not None
        comp = _make_composite_layer(rec.collector, kernel) if composite else None
        if comp is not None:
            from torch._dispatch.python import enable_python_dispatcher

            stack.enter_context(enable_python_dispatcher())
        stack.enter_context(kernel)
        if comp is not None:
            stack.enter_context(comp)
            rec.composite_parents = True
        try:
            yield rec
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                rec.error = "interrupted"
            elif not isinstance(exc, GeneratorExit):
                rec.error = (f"{exc.__class__.__name__}: {exc}".splitlines() or ["error"])[0][:500]
            raise
        finally:
            rec.seconds = time.perf_counter() - t0


@contextlib.contextmanager
def _sdpa_math_only() -> Iterator[None]:
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # older torch: the CPU already takes the math path
        yield
        return
    with sdpa_kernel([SDPBackend.MATH]):
        yield


def torch_version() -> str:
    return torch.__version__


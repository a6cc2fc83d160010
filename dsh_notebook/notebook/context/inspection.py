"""What a notebook variable is, found without running user code (``inspect_var``, the namespace
diff of the ``python`` tool, ``?`` help on ``{name}`` in the agent kernel).

Only ``type()``, static attribute lookup (:func:`static_attr`: the MRO's namespaces read
through ``type`` itself, so not even a metaclass's ``__getattribute__`` runs; the instance
``__dict__`` read with ``object.__getattribute__``) and the code of trusted libraries (builtins,
numpy, pandas) run: ``len``, ``repr``, ``shape`` or ``dtype`` are asked only of objects whose
*type* is one of those libraries' own (never a subclass defined elsewhere), so no ``__len__``,
``__repr__`` or property of the user's classes is called. Containers are shown with a bounded,
recursive repr that renders anything untrusted as ``<module.Type>``.
"""

from __future__ import annotations

import inspect
import itertools
import types
from typing import Any, TypedDict

SCALARS = (int, float, complex, bool, str, bytes, type(None))
CONTAINERS = (list, tuple, set, frozenset, dict)
TRUSTED_MODULES = ("builtins", "numpy", "pandas")
MAX_REPR = 400
MAX_COLUMNS = 50
_MISSING = object()


def type_attr(cls: type, name: str, default: Any = None) -> Any:
    """``cls.name`` read the way ``type`` reads it: a metaclass's own ``__getattribute__`` (user
    code) never runs."""
    try:
        return type.__getattribute__(cls, name)
    except (AttributeError, TypeError):
        return default


def is_one_of(cls: type, kinds: tuple[type, ...]) -> bool:
    """``cls in kinds`` by identity (``==`` could run a metaclass's ``__eq__``)."""
    return any(cls is kind for kind in kinds)


def type_name(obj: Any) -> str:
    cls = type(obj)
    module = type_attr(cls, "__module__", "") or ""
    qual = type_attr(cls, "__qualname__", None) or type_attr(cls, "__name__", "?")
    module = module if type(module) is str else ""
    qual = qual if type(qual) is str else "?"
    return qual if module in ("builtins", "") else f"{module}.{qual}"


def _trusted(obj: Any) -> bool:
    names = [type_attr(type(obj), "__module__", ""), type_attr(type(type(obj)), "__module__", "")]
    return all(type(n) is str and n.split(".")[0] in TRUSTED_MODULES for n in names)


def safe_repr(obj: Any, limit: int = MAX_REPR, depth: int = 2) -> str:
    """A bounded repr that never calls a ``__repr__`` of an untrusted type."""
    text = _repr(obj, depth, [limit])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _repr(obj: Any, depth: int, budget: list[int]) -> str:
    if budget[0] <= 0:
        return "…"
    cls = type(obj)
    if is_one_of(cls, SCALARS):
        text = repr(obj if cls not in (str, bytes) or len(obj) <= MAX_REPR else obj[:MAX_REPR])
    elif is_one_of(cls, CONTAINERS):
        if depth <= 0:
            text = f"<{cls.__name__} of {len(obj)}>"
        else:  # the first items only: a 20M-item list is never copied
            items = list(itertools.islice(obj.items() if cls is dict else obj, 20))
            if cls is dict:
                parts = [f"{_repr(k, depth - 1, budget)}: {_repr(v, depth - 1, budget)}" for k, v in items]
            else:
                parts = [_repr(v, depth - 1, budget) for v in items]
            more = ", …" if len(obj) > len(items) else ""
            brackets: dict[type, str] = {list: "[]", tuple: "()", dict: "{}"}
            open_, close = brackets.get(cls, "{}")[0], brackets.get(cls, "{}")[1]
            body = ", ".join(parts) + more
            if cls in (set, frozenset) and not parts:
                text = f"{cls.__name__}()"
            elif cls is tuple and len(parts) == 1 and not more:
                text = f"({body},)"
            else:
                text = f"{open_}{body}{close}"
    elif _trusted(obj) and _library_value(obj):
        try:
            text = repr(obj)
        except Exception as exc:
            text = f"<{type_name(obj)} (repr failed: {type(exc).__name__})>"
    else:
        text = f"<{type_name(obj)}>"
    budget[0] -= len(text)
    return text


def _library_value(obj: Any) -> bool:
    """numpy/pandas values whose repr shows only data of trusted types (no object dtype)."""
    dtype = _static(obj, "dtype")
    if dtype is not None:
        return _safe_dtype(dtype)
    dtypes = _static(obj, "dtypes")
    if dtypes is not None:
        try:
            return all(_safe_dtype(d) for d in list(dtypes))
        except Exception:
            return False
    return (getattr(type(obj), "__module__", "") or "").split(".")[0] != "pandas" or not hasattr(type(obj), "columns")


def _safe_dtype(dtype: Any) -> bool:
    """Values of this dtype are data, not arbitrary objects (object dtype may hold user objects)."""
    return getattr(dtype, "kind", "O") != "O" or str(dtype).startswith(("str", "string"))


_MRO = type.__dict__["__mro__"].__get__  # read through ``type`` itself: no metaclass code runs
_DICT = type.__dict__["__dict__"].__get__


def _class_lookup(klass: type, name: str) -> Any:
    for entry in _MRO(klass):
        namespace = _DICT(entry)
        if name in namespace:
            return namespace[name]
    raise AttributeError(name)


def static_attr(obj: Any, name: str) -> Any:
    """``obj.name`` found without running any code of ``obj``, its class or its metaclass (unlike
    :func:`inspect.getattr_static` on 3.11, which reads ``entry.__dict__`` through the metaclass):
    a descriptor is returned as is (the caller decides whether to run it)."""
    if issubclass(type(obj), type):
        try:
            return _class_lookup(obj, name)
        except AttributeError:
            return _class_lookup(type(obj), name)
    try:
        found: Any = _class_lookup(type(obj), name)
    except AttributeError:
        found = _MISSING
    if found is not _MISSING and _has_static(type(found), "__get__"):
        return found
    try:
        namespace = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        namespace = None
    if type(namespace) is dict and name in namespace:
        return namespace[name]
    if found is _MISSING:
        raise AttributeError(name)
    return found


def _has_static(cls: type, name: str) -> bool:
    try:
        _class_lookup(cls, name)
    except AttributeError:
        return False
    return True


def _static(obj: Any, name: str) -> Any:
    """``obj.name`` for a trusted type (its library code runs), None otherwise or on failure."""
    if not _trusted(obj) or is_one_of(type(obj), SCALARS + CONTAINERS):
        return None
    try:
        static_attr(obj, name)
    except AttributeError:
        return None
    try:
        return getattr(obj, name)
    except Exception:
        return None


def _shape_of(obj: Any) -> list[int] | None:
    shape = _static(obj, "shape")
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return [int(n) for n in shape]
    return None


class ObjectInfo(TypedDict, total=False):
    """What :func:`describe` can say about an object (``type`` always)."""

    type: str
    shape: list[int]
    dtype: str
    length: int
    columns: list[str]
    dtypes: dict[str, str]
    repr: str
    attributes: dict[str, str]
    signature: str


def describe(obj: Any, *, brief: bool = False) -> ObjectInfo:
    """``{type, shape?, dtype?, length?, columns?, dtypes?, repr?, attributes?, signature?}``."""
    info: ObjectInfo = {"type": type_name(obj)}
    cls = type(obj)
    shape = _shape_of(obj)
    if shape is not None:
        info["shape"] = shape
    if is_one_of(cls, (*CONTAINERS, str, bytes)):
        info["length"] = len(obj)
    dtype = _static(obj, "dtype")
    if dtype is not None:
        info["dtype"] = str(dtype)
    columns = _static(obj, "columns") if _trusted(obj) and _has_static(cls, "columns") else None
    if columns is not None:
        try:
            names = [str(c) for c in list(columns)[:MAX_COLUMNS]]
            info["columns"] = names
            dtypes = _static(obj, "dtypes")
            if dtypes is not None:
                info["dtypes"] = {str(k): str(v) for k, v in list(dtypes.items())[:MAX_COLUMNS]}
        except Exception:
            pass
    if brief:
        return info
    if issubclass(cls, types.ModuleType):
        info["repr"] = f"<module {types.ModuleType.__getattribute__(obj, '__name__')}>"
    elif issubclass(cls, type):  # a class: its metaclass may be the user's (no getattr on it)
        qual = type_attr(obj, "__qualname__", "?")
        info["repr"] = f"<class {qual if type(qual) is str else '?'}>"
        if _trusted(obj):
            try:
                info["signature"] = str(inspect.signature(obj))
            except (TypeError, ValueError):
                pass
    elif issubclass(cls, types.FunctionType | types.BuiltinFunctionType):
        info["repr"] = f"<function {getattr(obj, '__qualname__', '?')}>"
        try:
            info["signature"] = str(inspect.signature(obj))
        except (TypeError, ValueError):
            pass
    else:
        if is_one_of(cls, CONTAINERS):
            info["repr"] = safe_repr(obj)
        elif _trusted(obj) and not _library_value(obj):
            info["repr"] = f"<{type_name(obj)} with object values (not shown)>"
        elif _trusted(obj) and shape is not None and len(shape) == 2:
            info["repr"] = _head(obj)
        else:
            info["repr"] = safe_repr(obj)
        attrs = _instance_attributes(obj)
        if attrs is not None:
            info["attributes"] = attrs
    return info


def _head(obj: Any) -> str:
    head = _static(obj, "head")
    try:
        text = repr(head(5)) if callable(head) else repr(obj)
    except Exception as exc:
        text = f"<{type_name(obj)} (repr failed: {type(exc).__name__})>"
    return text if len(text) <= 1200 else text[:1199] + "…"


def _instance_attributes(obj: Any) -> dict[str, str] | None:
    """An untrusted object's own attributes: name → type (read from its ``__dict__``)."""
    if _trusted(obj) or issubclass(type(obj), types.ModuleType | type):
        return None
    try:
        namespace = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    if type(namespace) is not dict:
        return None
    return {str(k): type_name(v) for k, v in itertools.islice(namespace.items(), 30)}


def short(obj: Any) -> str:
    """``DataFrame 3×2`` / ``list[4]`` / ``int``: a type with its shape or length."""
    info = describe(obj, brief=True)
    name = info["type"].rsplit(".", 1)[-1]  # a Python type name, not wire routing
    if "shape" in info:
        return f"{name} {'×'.join(str(n) for n in info['shape'])}"
    if "length" in info:
        return f"{name}[{info['length']}]"
    return name

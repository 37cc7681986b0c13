"""Small record classes, declared like dataclasses, made cheaply.

The syntax tree, the receipts, the catalog rows and the commit records are
plain classes with typed fields. :func:`record` turns such a class into one
with ``__slots__``, an ``__init__`` taking the fields in order, equality and
``repr`` over the fields and, frozen (the default), a hash and no assignment
after construction: what ``@dataclass(frozen=True, slots=True)`` gives.

It exists for the cold start: the standard ``dataclasses`` module imports
``inspect`` and builds each class through several generated functions, which
cost a fresh ``memnet recall`` about a millisecond per class and tens of
milliseconds in all (issue 12). Here one small source text per class is
compiled, and nothing else is imported. ``typing.dataclass_transform`` tells
type checkers that the classes behave as dataclasses.

Only what MemNet uses is supported: fields with a default or a
``field(default=..., default_factory=..., compare=..., repr=...)``, frozen or
not, no inheritance between records.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")
_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record."""


class _Field:
    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(self, default: Any, factory: Any, compare: bool, repr: bool) -> None:
        self.default, self.factory, self.compare, self.repr = default, factory, compare, repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """A field's options, as ``dataclasses.field`` takes them."""
    if default is not _MISSING and default_factory is not None:
        raise ValueError("a field takes a default or a default_factory, not both")
    return _Field(default, default_factory, compare, repr)


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _make(cls: type, frozen: bool) -> type:
    own = cls.__dict__.get("__annotations__", {})
    names = [
        n for n, ann in own.items() if not str(ann).startswith(("ClassVar", "typing.ClassVar"))
    ]
    specs: dict[str, _Field] = {}
    for n in names:
        v = cls.__dict__.get(n, _MISSING)
        specs[n] = v if isinstance(v, _Field) else _Field(v, None, True, True)
    env: dict[str, Any] = {"_MISSING": _MISSING}
    params, body = [], []
    seen_default = False
    for n in names:
        f = specs[n]
        if f.factory is not None:
            env[f"_f_{n}"] = f.factory
            params.append(f"{n}=_MISSING")
            value = f"_f_{n}() if {n} is _MISSING else {n}"
            seen_default = True
        elif f.default is not _MISSING:
            env[f"_d_{n}"] = f.default
            params.append(f"{n}=_d_{n}")
            value = n
            seen_default = True
        else:
            if seen_default:
                raise TypeError(
                    f"{cls.__name__}: field {n!r} without a default follows one with a default"
                )
            params.append(n)
            value = n
        # a frozen record sets each slot through its descriptor (bound in env
        # once the class exists): a third of object.__setattr__'s cost
        body.append(f"  _s_{n}(self, {value})" if frozen else f"  self.{n} = {value}")
    src = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["  pass"])
    exec(src, env)  # noqa: S102 - our own text, built from the class's field names
    ns = {
        k: v
        for k, v in cls.__dict__.items()
        if k not in names and k not in ("__dict__", "__weakref__")
    }
    cmp = tuple(n for n in names if specs[n].compare)
    ns.update(
        __slots__=tuple(names),
        __match_args__=tuple(names),
        __record_fields__=tuple(names),
        __init__=env["__init__"],
        **_methods(tuple(names), cmp, tuple(n for n in names if specs[n].repr)),
    )
    if frozen:
        ns["__setattr__"] = _frozen_setattr
        ns["__delattr__"] = _frozen_delattr
    else:
        ns["__hash__"] = None
    new = type(cls)(cls.__name__, cls.__bases__, ns)
    for n in names:
        env[f"_s_{n}"] = new.__dict__[n].__set__
    for k, fn in ns.items():
        if k.startswith("__") and getattr(fn, "__qualname__", "").startswith("_methods."):
            fn.__qualname__ = f"{cls.__qualname__}.{k}"
    ns["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    return new


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function giving the tuple of an object's ``names`` attributes."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    many: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*names)
    return many


def _methods(
    names: tuple[str, ...], cmp: tuple[str, ...], shown: tuple[str, ...]
) -> dict[str, Any]:
    """Equality, hash, repr and pickling over the fields (one closure each,
    shared code: nothing is compiled per class but ``__init__``)."""
    key, every, seen = _values(cmp), _values(names), _values(shown)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return key(self) == key(other)

    def __hash__(self: Any) -> int:
        return hash(key(self))

    def __repr__(self: Any) -> str:
        pairs = ", ".join(f"{n}={v!r}" for n, v in zip(shown, seen(self), strict=True))
        return f"{self.__class__.__qualname__}({pairs})"

    def __getstate__(self: Any) -> tuple[Any, ...]:
        return every(self)

    def __setstate__(self: Any, state: tuple[Any, ...]) -> None:
        for n, v in zip(names, state, strict=True):
            object.__setattr__(self, n, v)

    return {
        "__eq__": __eq__,
        "__hash__": __hash__,
        "__repr__": __repr__,
        "__getstate__": __getstate__,
        "__setstate__": __setstate__,
    }


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(*, frozen: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = True) -> Any:
    """Make ``cls`` a record (see the module's text); ``frozen=False`` lets
    fields be assigned (and leaves the record unhashable)."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def field_names(obj: Any) -> tuple[str, ...]:
    """The fields of a record (class or instance), in order."""
    names: tuple[str, ...] = obj.__record_fields__
    return names


def replace(obj: T, **changes: Any) -> T:
    """A copy of the record ``obj`` with some fields changed."""
    names = field_names(obj)
    for k in changes:
        if k not in names:
            raise TypeError(f"{obj.__class__.__name__} has no field {k!r}")
    return obj.__class__(**{n: changes[n] if n in changes else getattr(obj, n) for n in names})


def as_dict(obj: Any) -> dict[str, Any]:
    """The fields of a record as a dict (values as held, not copied)."""
    return {n: getattr(obj, n) for n in field_names(obj)}


__all__ = ["FrozenInstanceError", "as_dict", "field", "field_names", "record", "replace"]

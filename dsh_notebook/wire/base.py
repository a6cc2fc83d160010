"""The base of every wire shape: frozen, camelCase on the wire, closed (unknown fields rejected).

Serialisation leaves ``None`` fields out (``exclude_none``), the one rule of the whole wire. A
shape whose ``None`` means something (``rpcId: null`` on an unpairable error, ``turn: null`` when
no turn runs) names those fields in ``__nullable__``: they are always sent, ``null`` included, and
the schema makes them required.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    JsonValue,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from .codes import ErrorCode, is_code


def _required_in_schema(schema: dict[str, Any], cls: type) -> None:
    """Tags (``const`` properties) and ``__wire_required__`` fields are required in the schema:
    they always appear on the wire even though Python gives them defaults."""
    props = schema.get("properties", {})
    names = [k for k, v in props.items() if "const" in v]
    for name in getattr(cls, "__wire_required__", ()):
        names.append(to_camel(name))
    required = schema.setdefault("required", [])
    for name in names:
        if name in props and name not in required:
            required.append(name)
    if not required:
        del schema["required"]


WIRE_CONFIG = ConfigDict(
    alias_generator=to_camel,
    validate_by_alias=True,
    serialize_by_alias=True,
    extra="forbid",
    ser_json_inf_nan="strings",
)
"""What every wire shape shares, the models and the chunk dataclasses alike: camelCase aliases,
unknown fields rejected, non-finite floats sent as strings. Each configuration adds
``validate_by_name=True`` (either name read) itself: pydantic's mypy plugin reads it only there."""


class Frozen(BaseModel):
    """Base for every wire shape: frozen, camelCase aliases, unknown fields rejected."""

    __wire_required__: ClassVar[tuple[str, ...]] = ()

    model_config = ConfigDict(**WIRE_CONFIG, validate_by_name=True, json_schema_extra=_required_in_schema, frozen=True)


class Nullable(Frozen):
    """A wire shape with fields sent as ``null`` even under ``exclude_none`` (``__nullable__``)."""

    __nullable__: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _keep_nulls(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self.__nullable__:
                if getattr(self, name) is None:
                    data.setdefault(to_camel(name), None)
        return data


def tag(obj: object) -> str | None:
    """The ``type`` tag of one raw wire object (a log line, an event, a block, an envelope) before
    it is parsed, or ``None`` (not an object, or no string tag). The one place a ``type`` is read
    off a dict: code outside the wire routes raw wire data through this or the wire's adapters."""
    kind = obj.get("type") if isinstance(obj, dict) else None
    return kind if isinstance(kind, str) else None


def dump(model: BaseModel) -> dict[str, JsonValue]:
    """The wire form of a model as Python data (camelCase, ``None`` fields left out)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def to_json(model: BaseModel) -> str:
    """The wire form of a model as one JSON text (no newline); its serializer called directly."""
    return model.__pydantic_serializer__.to_json(model, by_alias=True, exclude_none=True).decode()


class Encoded:
    """A wire value already serialised: the JSON text of one model (a stream item's value).

    Lets a producer serialise once for many receivers, and splice stored event lines into
    items without parsing them again."""

    __slots__ = ("json",)

    def __init__(self, json: str) -> None:
        self.json = json

    def __repr__(self) -> str:
        return f"Encoded({self.json[:80]!r})"


ItemValue = BaseModel | Encoded
"""What a stream sink accepts: an item model, or its JSON text already encoded."""


def refusal(*, code: ErrorCode, message: str) -> PydanticCustomError:
    """What a model's own check raises to refuse a value with a code (read by :func:`error_code`)."""
    return PydanticCustomError(code, message)  # no context: the message is taken as written


def error_code(exc: ValidationError) -> tuple[ErrorCode, str] | None:
    """The code and message a model's own check raised (a ``PydanticCustomError`` whose type is an
    :data:`~dsh_notebook.wire.codes.ErrorCode`, e.g. ``PromptCommand``'s ``EMPTY_CONTENT``), if
    one did: the Gateway and the client refuse with that code, not ``BAD_ARGS``."""
    for err in exc.errors():
        kind = err["type"]
        if is_code(kind):
            return kind, err["msg"]
    return None

"""OTLP/JSON read as the OTLP specification defines it, into the official protobuf messages.

OTLP/JSON is protobuf's JSON mapping with deviations a lenient parser would let slip: trace
and span ids are hex (not base64), enum values are integers (not names), keys are
lowerCamelCase (the proto field names are not valid keys), and unknown keys are ignored.
`parse` enforces exactly these, so a test receiver refuses what a strict collector would.
"""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

if TYPE_CHECKING:
    from google._upb._message import Descriptor as UpbDescriptor
    from google._upb._message import FieldDescriptor as UpbFieldDescriptor

M = TypeVar("M", bound=Message)
# The id fields, hex-encoded in OTLP/JSON, and their size in bytes.
_ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
_HEX = re.compile(r"[0-9a-fA-F]*")


class OtlpJsonError(ValueError):
    """The payload is not OTLP/JSON (the receiver answers 400)."""


def parse(data: bytes, message: type[M]) -> M:
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OtlpJsonError(f"not JSON: {exc}") from exc
    parsed = message()
    try:
        json_format.ParseDict(
            _proto3(document, parsed.DESCRIPTOR), parsed, ignore_unknown_fields=True
        )
    except json_format.ParseError as exc:
        raise OtlpJsonError(str(exc)) from exc
    return parsed


def _proto3(value: Any, descriptor: Descriptor | UpbDescriptor) -> dict[str, Any]:
    """`value` checked against OTLP/JSON's rules and rewritten in protobuf's own JSON mapping."""
    if not isinstance(value, dict):
        raise OtlpJsonError(f"{descriptor.name} must be a JSON object, not {value!r}")
    out: dict[str, Any] = {}
    fields = {field.json_name: field for field in descriptor.fields}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            if key in descriptor.fields_by_name:
                raise OtlpJsonError(f"{descriptor.name}: key {key!r} is not lowerCamelCase")
            continue  # unknown keys are ignored, as the specification requires
        if field.is_repeated and isinstance(item, list):
            out[key] = [_field(field, element) for element in item]
        else:
            out[key] = _field(field, item)
    return out


def _field(field: FieldDescriptor | UpbFieldDescriptor, item: Any) -> Any:
    if field.message_type is not None:
        return _proto3(item, field.message_type)
    if field.enum_type is not None and (not isinstance(item, int) or isinstance(item, bool)):
        raise OtlpJsonError(f"{field.json_name} must be an integer in OTLP/JSON, not {item!r}")
    if field.type == FieldDescriptor.TYPE_BYTES and field.json_name in _ID_BYTES:
        return base64.b64encode(_hex_id(field.json_name, item)).decode("ascii")
    return item


def _hex_id(name: str, item: Any) -> bytes:
    size = _ID_BYTES[name]
    if not isinstance(item, str) or not _HEX.fullmatch(item) or len(item) not in (0, 2 * size):
        raise OtlpJsonError(f"{name} must be {2 * size} hex digits in OTLP/JSON, not {item!r}")
    return bytes.fromhex(item)

"""Input objects built from a plan made once per type, not re-derived per value.

Why: Strawberry turns a GraphQL input value into its input class by walking
every field of the type, resolving each field's annotation and GraphQL name,
for every value. graphql-core has already coerced the leaves by then (custom
scalars' `parse_value`, enums), so that walk only re-discovers, per value,
that most fields need nothing. A `writeMemories` batch of 1000 inputs spent
more Python time in it than in graphql-core's own coercion, and a `search`
spent a sixth of its GraphQL time there.

`planned` installs `from_input`, the hook Strawberry's type definitions offer
integrations: leaves and lists of leaves are taken as they are (lists copied,
as Strawberry does, so graphql-core's shared defaults are never handed out),
nested input objects go through Strawberry's own conversion, which uses their
plan in turn. What the class receives is what Strawberry would have built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass
from typing import Any, TypeVar

from strawberry.scalars import is_scalar
from strawberry.types.arguments import InputContext
from strawberry.types.base import StrawberryList, StrawberryOptional, StrawberryType
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition

T = TypeVar("T", bound=type)
# A field whose value is a list of leaves: copied, not converted.
_LEAF_LIST = object()


@dataclass(frozen=True)
class _Field:
    graphql_name: str
    python_name: str
    # None: a leaf, taken as is; _LEAF_LIST: copied; else the type to convert it as.
    conversion: Any


@dataclass(frozen=True)
class _Plan:
    fields: tuple[_Field, ...]
    # Fields without a Python default get None when omitted (Strawberry's rule).
    implicit_none: tuple[str, ...]


def _unwrapped(type_: Any) -> Any:
    while isinstance(type_, StrawberryOptional):
        type_ = type_.of_type
    return type_


def _is_leaf(type_: Any, context: InputContext) -> bool:
    """Scalars and enums: graphql-core's coercion already made their Python values."""
    type_ = _unwrapped(type_)
    return (is_scalar(type_, context.scalar_registry)
            or isinstance(type_, StrawberryEnumDefinition) or has_enum_definition(type_))


def _conversion(type_: StrawberryType | type, context: InputContext) -> Any:
    if _is_leaf(type_, context):
        return None
    inner = _unwrapped(type_)
    if isinstance(inner, StrawberryList) and _is_leaf(inner.of_type, context):
        return _LEAF_LIST
    return type_


def _plan_of(cls: type, context: InputContext) -> _Plan:
    definition = cls.__strawberry_definition__  # type: ignore[attr-defined]
    return _Plan(
        fields=tuple(
            _Field(graphql_name=context.config.name_converter.from_field(field),
                   python_name=field.python_name,
                   conversion=_conversion(field.resolve_type(type_definition=definition),
                                          context))
            for field in definition.fields),
        implicit_none=tuple(
            field.python_name for field in definition.fields
            if field.default_value is MISSING and field.default_factory is MISSING),
    )


def planned(cls: T) -> T:
    """Build `cls` (a `@strawberry.input`) from its plan; apply above the decorator."""
    # One plan per class: every schema this project builds (build_schema) shares the
    # classes, their scalars and the camel-case naming, so the plan is the same for all.
    plans: dict[type, _Plan] = {}

    def from_input(target: type, value: Mapping[str, Any], context: InputContext) -> Any:
        plan = plans.get(target)
        if plan is None:
            plan = plans[target] = _plan_of(target, context)
        kwargs: dict[str, Any] = dict.fromkeys(plan.implicit_none)
        for field in plan.fields:
            if field.graphql_name not in value:
                continue
            item = value[field.graphql_name]
            if item is None or field.conversion is None:
                kwargs[field.python_name] = item
            elif field.conversion is _LEAF_LIST:
                kwargs[field.python_name] = list(item)
            else:
                kwargs[field.python_name] = context.convert(item, field.conversion,
                                                            field.graphql_name)
        return target(**kwargs)

    cls.__strawberry_definition__.from_input = from_input  # type: ignore[attr-defined]
    return cls

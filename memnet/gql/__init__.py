"""The shaped GQL wire profile: grammar, parser and emitter."""

from memnet.gql.emit import (
    format_edge,
    format_insert,
    format_node,
    format_props,
    format_query,
    format_value,
)
from memnet.gql.parse import (
    MAX_DELTA_CHARS,
    MAX_DEPTH,
    MAX_QUERY_CHARS,
    parse,
    parse_delta,
    parse_query,
)

__all__ = [
    "MAX_DELTA_CHARS",
    "MAX_DEPTH",
    "MAX_QUERY_CHARS",
    "format_edge",
    "format_insert",
    "format_node",
    "format_props",
    "format_query",
    "format_value",
    "parse",
    "parse_delta",
    "parse_query",
]

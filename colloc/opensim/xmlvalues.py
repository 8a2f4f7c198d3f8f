"""Typed values of an ``.osim`` element's children (numbers, flags, vectors), with OpenSim's defaults."""
from __future__ import annotations

from ..errors import ModelError


def text(element, tag):
    """The stripped text of ``element``'s child ``tag``, or None when it is absent."""
    child = element.find(tag)
    return None if child is None else (child.text or "").strip()


def _where(element, tag):
    return f"`{tag}` of {element.tag} `{element.get('name', '')}`"


def number(element, tag, default):
    """A float child, or ``default`` when the file does not set it."""
    raw = text(element, tag)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ModelError(f"{_where(element, tag)} must be a number; got {raw!r}.") from None


def flag(element, tag, default):
    """A boolean child (``true``/``false``), or ``default``."""
    raw = text(element, tag)
    if raw is None or raw == "":
        return default
    if raw.lower() not in ("true", "false"):
        raise ModelError(f"{_where(element, tag)} must be true or false; got {raw!r}.")
    return raw.lower() == "true"


def vector(element, tag, size, default=None):
    """A whitespace-separated vector child of ``size`` numbers, or ``default``."""
    raw = text(element, tag)
    if raw is None or raw == "":
        return default
    try:
        values = [float(x) for x in raw.split()]
    except ValueError:
        raise ModelError(f"{_where(element, tag)} must be numbers; got {raw!r}.") from None
    if size is not None and len(values) != size:
        raise ModelError(f"{_where(element, tag)} needs {size} numbers; got {len(values)}.")
    return values


def leaf(path):
    """The last name of a component path (``/jointset/knee_r/knee_angle_r`` → ``knee_angle_r``)."""
    return path.strip().rstrip("/").rsplit("/", 1)[-1]

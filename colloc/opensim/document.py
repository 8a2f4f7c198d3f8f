"""An ``.osim`` file as an element tree whose elements know their line.

Read with the standard library's expat parser: :func:`parse` builds an
``xml.etree.ElementTree`` of :class:`Node`, each with the ``sourceline`` where
its start tag begins, so that every error can name the line of the element it
is about.  The helpers read OpenSim's property conventions (numbers separated
by spaces, ``true``/``false``).
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from ..errors import FileFormatError, ModelError


class Node(ET.Element):
    """An element of the tree with the line of its start tag (``sourceline``, 1-based)."""

    sourceline = 0


def parse(path):
    """The root ``<OpenSimDocument>`` (or ``<Model>``) of an ``.osim`` file, as a :class:`Node` tree.

    Raises
    ------
    FileFormatError
        If the file is missing or is not well-formed XML (with the line).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileFormatError(f"OpenSim model file `{path}` does not exist.")
    builder = ET.TreeBuilder(element_factory=Node)
    parser = expat.ParserCreate()

    def start(tag, attrs):
        builder.start(tag, attrs).sourceline = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        with open(path, "rb") as fh:
            parser.ParseFile(fh)
        return builder.close()
    except expat.ExpatError as err:
        raise FileFormatError(f"`{path}` is not well-formed XML: {expat.ErrorString(err.code)} at line {err.lineno}.") from None


def where(el, path=None):
    """`` (line N of `file`)`` for an error message."""
    file = f" of `{os.path.basename(os.fspath(path))}`" if path is not None else ""
    return f" (line {getattr(el, 'sourceline', 0)}{file})"


def node_text(el, tag):
    """Stripped text of the child ``<tag>`` of ``el``, or ``None`` if absent or empty."""
    child = el.find(tag)
    if child is None or child.text is None or not child.text.strip():
        return None
    return child.text.strip()


def floats(el, tag, path=None, size=None, default=None):
    """The numbers in ``<tag>`` of ``el`` as an array; ``default`` if it is absent.

    Raises
    ------
    ModelError
        If the child is missing (without a default), is not numbers, or has a size other than ``size``.
    """
    text = node_text(el, tag)
    if text is None:
        if default is not None:
            return np.asarray(default, dtype=float)
        raise ModelError(f"{el.tag} `{el.get('name', '')}`{where(el, path)} has no `<{tag}>`.")
    try:
        out = np.array([float(t) for t in text.replace(",", " ").split()])
    except ValueError:
        raise ModelError(f"`<{tag}>` of {el.tag} `{el.get('name', '')}`{where(el.find(tag), path)} is not a list of numbers: {text!r}.") from None
    if size is not None and out.size != size:
        raise ModelError(f"`<{tag}>` of {el.tag} `{el.get('name', '')}`{where(el.find(tag), path)} has {out.size} numbers; expected {size}.")
    return out


def is_true(el, tag, default=False):
    """OpenSim's boolean property ``<tag>`` (``true``/``false``) of ``el``."""
    text = node_text(el, tag)
    return default if text is None else text.lower() == "true"


def names(el, tag):
    """The space-separated names in ``<tag>`` of ``el`` (OpenSim's string lists)."""
    text = node_text(el, tag)
    return text.split() if text else []


def objects(el, tag):
    """The elements listed in ``<tag><objects>…</objects></tag>`` (an OpenSim Set), or in ``<tag>`` directly."""
    holder = el.find(tag)
    if holder is None:
        return []
    inner = holder.find("objects")
    return list(inner) if inner is not None else list(holder)

def force_path(model_element, element):
    """OpenSim's absolute path of a force: ``/forceset/<name>`` in the ForceSet, ``/<name>`` among the
    model's own components (where Moco's 2D_gait.osim keeps its muscles and its ``lumbarAct``: Moco names
    their states ``/hamstrings_r/activation`` and the actuator's control ``/lumbarAct``)."""
    forceset = model_element.find("ForceSet")
    members = forceset.find("objects") if forceset is not None and forceset.find("objects") is not None else forceset
    inside = members is not None and any(child is element for child in members)
    return f"/forceset/{element.get('name')}" if inside else f"/{element.get('name')}"



__all__ = ["Node", "parse", "where", "node_text", "floats", "is_true", "names", "objects", "force_path"]

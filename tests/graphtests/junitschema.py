"""The part of the JUnit XML schema that CI readers rely on, as XSD, and a small stdlib validator.

The schema is the Ant/Jenkins JUnit report format reduced to what ``testgraph --junit`` and
``loadgraph --junit`` write (``testsuites`` > ``testsuite`` > ``testcase`` >
``failure``/``error``/``skipped``, and the suite's ``system-out``), written here from the
published format. The validator understands exactly the XSD constructs used below:
``element`` (by ``type`` or inline ``complexType``, ``minOccurs``/``maxOccurs``), ``sequence``,
``choice``, ``attribute`` (``use="required"``), ``simpleContent`` extension, and the simple types
``xs:string``, ``xs:int``, ``xs:decimal`` and a pattern-restricted timestamp.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

XSD = """\
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:simpleType name="ISO8601_DATETIME_PATTERN">
    <xs:restriction base="xs:dateTime">
      <xs:pattern value="[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"/>
    </xs:restriction>
  </xs:simpleType>
  <xs:complexType name="problem">
    <xs:simpleContent>
      <xs:extension base="xs:string">
        <xs:attribute name="message" type="xs:string"/>
        <xs:attribute name="type" type="xs:string" use="required"/>
      </xs:extension>
    </xs:simpleContent>
  </xs:complexType>
  <xs:complexType name="output">
    <xs:simpleContent>
      <xs:extension base="xs:string"/>
    </xs:simpleContent>
  </xs:complexType>
  <xs:complexType name="testcase">
    <xs:choice minOccurs="0" maxOccurs="1">
      <xs:element name="skipped" type="problem"/>
      <xs:element name="error" type="problem"/>
      <xs:element name="failure" type="problem"/>
    </xs:choice>
    <xs:attribute name="name" type="xs:string" use="required"/>
    <xs:attribute name="classname" type="xs:string" use="required"/>
    <xs:attribute name="time" type="xs:decimal" use="required"/>
  </xs:complexType>
  <xs:complexType name="testsuite">
    <xs:sequence>
      <xs:element name="testcase" type="testcase" minOccurs="0" maxOccurs="unbounded"/>
      <xs:element name="system-out" type="output" minOccurs="0"/>
    </xs:sequence>
    <xs:attribute name="name" type="xs:string" use="required"/>
    <xs:attribute name="tests" type="xs:int" use="required"/>
    <xs:attribute name="failures" type="xs:int" use="required"/>
    <xs:attribute name="errors" type="xs:int" use="required"/>
    <xs:attribute name="skipped" type="xs:int"/>
    <xs:attribute name="time" type="xs:decimal" use="required"/>
    <xs:attribute name="timestamp" type="ISO8601_DATETIME_PATTERN" use="required"/>
    <xs:attribute name="hostname" type="xs:string" use="required"/>
  </xs:complexType>
  <xs:element name="testsuites">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="testsuite" type="testsuite" minOccurs="0" maxOccurs="unbounded"/>
      </xs:sequence>
      <xs:attribute name="name" type="xs:string"/>
      <xs:attribute name="tests" type="xs:int"/>
      <xs:attribute name="failures" type="xs:int"/>
      <xs:attribute name="errors" type="xs:int"/>
      <xs:attribute name="time" type="xs:decimal"/>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""

_XS = "{http://www.w3.org/2001/XMLSchema}"
_SIMPLE = {
    "xs:string": re.compile(r"(?s).*"),
    "xs:int": re.compile(r"[+-]?[0-9]+"),
    "xs:decimal": re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"),
}


class Invalid(AssertionError):
    pass


def validate(document: bytes, xsd: str = XSD) -> None:
    """Raise :class:`Invalid` naming the first place where ``document`` breaks the schema."""
    schema = ET.fromstring(xsd)
    types: dict[str, Any] = {
        t.get("name"): t for t in schema if t.tag in (f"{_XS}complexType", f"{_XS}simpleType")
    }
    root = ET.fromstring(document)
    (top,) = [e for e in schema if e.tag == f"{_XS}element"]
    if root.tag != top.get("name"):
        raise Invalid(f"root is <{root.tag}>, the schema wants <{top.get('name')}>")
    _element(root, top, types, root.tag)


def _complex(decl: Any, types: dict[str, Any]) -> Any:
    inline = decl.find(f"{_XS}complexType")
    return inline if inline is not None else types[decl.get("type")]


def _check_simple(value: str, type_name: str, types: dict[str, Any], where: str) -> None:
    if type_name in _SIMPLE:
        if not _SIMPLE[type_name].fullmatch(value):
            raise Invalid(f"{where}: {value!r} is not {type_name}")
        return
    pattern = types[type_name].find(f"{_XS}restriction/{_XS}pattern").get("value")
    if not re.fullmatch(pattern, value):
        raise Invalid(f"{where}: {value!r} does not match {type_name}")


def _attributes(element: Any, holder: Any, types: dict[str, Any], where: str) -> None:
    attributes = {a.get("name"): a for a in holder.findall(f"{_XS}attribute")}
    for name, attr in attributes.items():
        if attr.get("use") == "required" and name not in element.attrib:
            raise Invalid(f"{where}: attribute {name!r} is required")
    for name, value in element.attrib.items():
        if name not in attributes:
            raise Invalid(f"{where}: attribute {name!r} is not in the schema")
        _check_simple(value, attributes[name].get("type"), types, f"{where}/@{name}")


def _counts(children: list[Any], group: Any, decls: dict[str, Any], where: str) -> None:
    if group.tag == f"{_XS}choice":
        limit = group.get("maxOccurs", "1")
        if limit != "unbounded" and len(children) > int(limit):
            raise Invalid(f"{where}: at most {limit} of {sorted(decls)}")
    for name, d in decls.items():
        count = sum(1 for c in children if c.tag == name)
        if group.tag == f"{_XS}sequence" and count < int(d.get("minOccurs", "1")):
            raise Invalid(f"{where}: <{name}> is required")
        maximum = d.get("maxOccurs", "1")
        if maximum != "unbounded" and count > int(maximum):
            raise Invalid(f"{where}: at most {maximum} <{name}>")


def _element(element: Any, decl: Any, types: dict[str, Any], where: str) -> None:
    ctype = _complex(decl, types)
    content = ctype.find(f"{_XS}simpleContent/{_XS}extension")
    _attributes(element, content if content is not None else ctype, types, where)
    children = list(element)
    if content is not None:
        if children:
            raise Invalid(f"{where}: simple content cannot hold elements")
        return
    if (element.text or "").strip():
        raise Invalid(f"{where}: text is not allowed here")
    group = ctype.find(f"{_XS}sequence")
    if group is None:
        group = ctype.find(f"{_XS}choice")
    if group is None:
        if children:
            raise Invalid(f"{where}: no child elements allowed")
        return
    decls = {d.get("name"): d for d in group.findall(f"{_XS}element")}
    for child in children:
        if child.tag not in decls:
            raise Invalid(f"{where}: <{child.tag}> is not allowed (allowed: {sorted(decls)})")
        _element(child, decls[child.tag], types, f"{where}/{child.tag}")
    _counts(children, group, decls, where)

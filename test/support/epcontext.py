#!/usr/bin/env python3
"""Writes ONNX EPContext models for the tests (standard library only): what ONNX Runtime's QNN
execution provider and Ultralytics' format="qnn" export write, a protobuf ModelProto whose graph
holds EPContext nodes (domain com.microsoft) and whose metadata_props carry the model's facts.
The C tests have their own writer (test/c/onnx_build.c); the htpu tests, ExUnit and the fuzz
seeds (fuzz/make_seeds.py) use this one.

    epcontext.py OUT.onnx [--node NAME [--embed FILE | --external NAME] [--main 0|1]
                           [--embed-mode 0|1] [--attr KEY=VALUE]...]... [--prop KEY=VALUE]...
                          [--op OPTYPE]... [--producer NAME] [--producer-version V]

--node starts an EPContext node; --embed puts FILE's bytes in its ep_cache_context (embed_mode
left to its default, 1, as Ultralytics does); --external writes NAME there with embed_mode 0;
--attr adds a string attribute (source, ep_sdk_version, partition_name, ...); --op adds a plain
node of that op type (a QDQ model is --op QuantizeLinear --op Conv ...).
"""
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(number, wire, payload):
    tag = varint(number << 3 | wire)
    if wire == 0:
        return tag + varint(payload)
    return tag + varint(len(payload)) + payload


def s(number, text):
    return field(number, 2, text.encode() if isinstance(text, str) else text)


def attr_int(name, value):
    return field(5, 2, s(1, name) + field(20, 0, 2) + field(3, 0, value))


def attr_bytes(name, value):
    return field(5, 2, s(1, name) + field(20, 0, 3) + s(4, value))


def node(spec):
    body = s(1, "images") + s(2, "output0") + s(3, spec["name"]) + s(4, spec.get("op", "EPContext"))
    if "cache" in spec:
        body += attr_bytes("ep_cache_context", spec["cache"])
    for key in ("main_context", "embed_mode"):
        if key in spec:
            body += attr_int(key, spec[key])
    for key, value in spec.get("attrs", []):
        body += attr_bytes(key, value)
    if spec.get("op", "EPContext") == "EPContext":
        body += s(7, "com.microsoft")
    return field(1, 2, body)


def model(nodes, props=(), producer="epcontext.py", producer_version="1.0"):
    graph = b"".join(node(n) for n in nodes) + s(2, "main_graph")
    out = field(1, 0, 9) + s(2, producer) + s(3, producer_version) + field(7, 2, graph)
    out += field(8, 2, s(1, "") + field(2, 0, 17))
    for k, v in props:
        out += field(14, 2, s(1, k) + s(2, v))
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out, args = argv[1], argv[2:]
    nodes, props, producer, version, i = [], [], "epcontext.py", "1.0", 0
    while i < len(args):
        a = args[i]
        v = args[i + 1] if i + 1 < len(args) else sys.exit(f"{a} needs a value")
        i += 2
        if a == "--node":
            nodes.append({"name": v})
        elif a == "--op":
            nodes.append({"name": f"{v}_{len(nodes)}", "op": v})
        elif a == "--embed":
            nodes[-1]["cache"] = open(v, "rb").read()
        elif a == "--external":
            nodes[-1]["cache"] = v
            nodes[-1]["embed_mode"] = 0
        elif a == "--main":
            nodes[-1]["main_context"] = int(v)
        elif a == "--embed-mode":
            nodes[-1]["embed_mode"] = int(v)
        elif a == "--attr":
            nodes[-1].setdefault("attrs", []).append(tuple(v.split("=", 1)))
        elif a == "--prop":
            props.append(tuple(v.split("=", 1)))
        elif a == "--producer":
            producer = v
        elif a == "--producer-version":
            version = v
        else:
            sys.exit(f"unknown option {a}")
    with open(out, "wb") as f:
        f.write(model(nodes, props, producer, version))


if __name__ == "__main__":
    main(sys.argv)

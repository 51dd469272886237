#!/usr/bin/env python3
"""Open a PPO Playground checkpoint (.safetensors) with nothing but the Python standard library.

Shows that an exported model is an ordinary safetensors file: an 8-byte little-endian header
length, a JSON header, then raw little-endian tensor bytes. With numpy installed the same file
opens via `safetensors.numpy.load_file(path)`; this script exists for machines without it.

Usage: python3 scripts/read_safetensors.py model.safetensors [--head N]
Prints the metadata, then one line per tensor: name, dtype, shape and its first N values.
"""
import argparse
import array
import json
import struct
import sys

TYPECODES = {"F32": "f", "I32": "i"}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError("file truncated: no 8-byte header length")
    (header_len,) = struct.unpack("<Q", raw[:8])
    if 8 + header_len > len(raw):
        raise ValueError("file truncated: header length %d runs past the end" % header_len)
    header = json.loads(raw[8 : 8 + header_len].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    data = raw[8 + header_len :]
    tensors = {}
    for name, info in header.items():
        code = TYPECODES.get(info["dtype"])
        if code is None:
            raise ValueError("tensor %r: unsupported dtype %s" % (name, info["dtype"]))
        begin, end = info["data_offsets"]
        values = array.array(code)
        values.frombytes(data[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        tensors[name] = (info["dtype"], info["shape"], values)
    return tensors, metadata


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--head", type=int, default=4, help="values to print per tensor")
    args = parser.parse_args()
    tensors, metadata = read_safetensors(args.path)
    for key in sorted(metadata):
        print("metadata %s = %s" % (key, metadata[key]))
    for name in sorted(tensors):
        dtype, shape, values = tensors[name]
        head = ", ".join(repr(v) for v in values[: args.head])
        print("tensor %s %s %s [%s]" % (name, dtype, json.dumps(shape), head))


if __name__ == "__main__":
    main()

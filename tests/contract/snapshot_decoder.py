#!/usr/bin/env python3
"""A decoder of shiftcast's ServerFrame snapshot (protocol version 3) written from docs/protocol.md alone:
the Envelope through the bindings `flatc --python` generates from protocol/shiftcast.fbs, the entity
block bit by bit from the document's "Entity block" tables. It decodes the document's
`server_frame_snapshot` test vector against the document's baseline, and runs the negative checks the
document promises (every proper prefix of the block, and non-zero padding, are refused). Usage:

    snapshot_decoder.py --doc docs/protocol.md [--generated DIR]

Prints one JSON object: the frame's fields, the decoded world as [id, kind, flags, yaw, x, y, z] rows,
and how many malformed variants were refused out of how many tried. tests/protocol/test_vectors_test.cpp
runs it and compares with the C++ library.
"""
import argparse
import json
import os
import re
import sys

PROTOCOL_VERSION = 3

# The document's tiered widths ("Entity block").
COUNT = (5, 10, 32)
ID_GAP = (0, 3, 7, 12, 32)
KIND = (2, 8)
FLAGS = (1, 8)
POSITION = (10, 14, 18, 22, 32)
POSITION_DELTA = (0, 5, 9, 13, 17, 33)
YAW_DELTA = (5, 10, 16)

# The document's baseline for the entity block vector: id -> (kind, flags, yaw, x, y, z), in quanta.
BASELINE = {1: (0, 0, 0, 0, 0, 0), 2: (1, 0, 100, 16, 32, 0), 3: (2, 1, 0, -5, 0, 7)}


class Malformed(Exception):
    pass


class Bits:
    """Bit i of the stream is bit i % 8 of byte i // 8; fields least significant bit first."""

    def __init__(self, data):
        self.data = data
        self.at = 0

    def left(self):
        return len(self.data) * 8 - self.at

    def u(self, n):
        if n > self.left():
            raise Malformed("past the end")
        v = 0
        for i in range(n):
            bit = (self.data[(self.at + i) // 8] >> ((self.at + i) % 8)) & 1
            v |= bit << i
        self.at += n
        return v

    def t(self, widths):
        tier = 0
        while tier + 1 < len(widths) and self.u(1) == 1:
            tier += 1
        v = self.u(widths[tier])
        if tier > 0 and v.bit_length() <= widths[tier - 1]:
            raise Malformed("not the narrowest width")
        return v

    def ts(self, widths):
        z = self.t(widths)
        return (z >> 1) ^ -(z & 1)

    def finish(self):
        if self.left() >= 8 or self.u(self.left()) != 0:
            raise Malformed("trailing bits")


def decode_block(data, baseline):
    b = Bits(data)
    removed, changed = [], {}
    count = b.t(COUNT)
    if count > b.left():
        raise Malformed("removed count")
    previous = -1
    for _ in range(count):
        previous += 1 + b.t(ID_GAP)
        if previous > 0xFFFFFFFF:
            raise Malformed("id")
        removed.append(previous)
    count = b.t(COUNT)
    if count > b.left() // 4:
        raise Malformed("changed count")
    previous = -1
    for _ in range(count):
        previous += 1 + b.t(ID_GAP)
        if previous > 0xFFFFFFFF:
            raise Malformed("id")
        base = baseline.get(previous)
        if base is None:
            kind, flags = b.t(KIND), b.t(FLAGS)
            yaw = b.u(16)
            xyz = [b.ts(POSITION) for _ in range(3)]
            if kind > 255 or flags > 255 or any(not -2**31 <= c < 2**31 for c in xyz):
                raise Malformed("range")
        else:
            kind, flags, yaw = base[0], base[1], base[2]
            xyz = list(base[3:])
            if b.u(1):
                deltas = [b.ts(POSITION_DELTA) for _ in range(3)]
                if not any(deltas):
                    raise Malformed("position flagged, unchanged")
                xyz = [c + d for c, d in zip(xyz, deltas)]
                if any(not -2**31 <= c < 2**31 for c in xyz):
                    raise Malformed("range")
            if b.u(1):
                d = b.ts(YAW_DELTA)
                if d == 0 or not -2**15 <= d < 2**15:
                    raise Malformed("yaw")
                yaw = (yaw + d) % 65536
            if b.u(1):
                new_kind, new_flags = b.t(KIND), b.t(FLAGS)
                if new_kind > 255 or new_flags > 255 or (new_kind, new_flags) == (kind, flags):
                    raise Malformed("kind/flags")
                kind, flags = new_kind, new_flags
        changed[previous] = (kind, flags, yaw, *xyz)
    used = b.at
    b.finish()
    if set(removed) & set(changed):
        raise Malformed("both changed and removed")
    world = {i: e for i, e in baseline.items() if i not in removed}
    world.update(changed)
    return [[i, *world[i]] for i in sorted(world)], used


def vector(doc_text, name):
    m = re.search(r"<!-- vector: " + name + r" -->\n```hex\n([0-9a-f\s]*?)```", doc_text)
    if m is None:
        raise SystemExit("no vector " + name)
    return bytes.fromhex("".join(m.group(1).split()))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--doc", required=True)
    parser.add_argument("--generated", default=os.environ.get("SHIFTCAST_PYTHON_PROTOCOL_DIR", ""))
    args = parser.parse_args()
    sys.path.insert(0, args.generated)
    from shiftcast.wire import Envelope, Message, ServerFrame

    with open(args.doc) as f:
        doc = f.read()
    data = vector(doc, "server_frame_snapshot")
    if data[4:8] != b"SHC1":
        raise SystemExit("file identifier")
    envelope = Envelope.Envelope.GetRootAs(data, 0)
    if envelope.Version() != PROTOCOL_VERSION or envelope.MessageType() != Message.Message.ServerFrame:
        raise SystemExit("version or message type")
    frame = ServerFrame.ServerFrame()
    table = envelope.Message()
    frame.Init(table.Bytes, table.Pos)
    snapshot = frame.Snapshot()
    block = bytes(snapshot.Block(i) for i in range(snapshot.BlockLength()))
    world, used = decode_block(block, BASELINE)
    if block != vector(doc, "entity_block"):
        raise SystemExit("the frame's block is not the documented entity block")

    variants = [block[:cut] for cut in range(len(block))]
    for bit in range(used, len(block) * 8):  # a one in the padding
        variant = bytearray(block)
        variant[bit // 8] |= 1 << (bit % 8)
        variants.append(bytes(variant))
    variants.append(block + b"\x00")  # a whole byte more
    refused = 0
    for v in variants:
        try:
            decode_block(v, BASELINE)
        except Malformed:
            refused += 1
    print(json.dumps({"tick": frame.Tick(), "input_ack": frame.InputAck(), "snapshot_tick": snapshot.Tick(),
                      "baseline_tick": snapshot.BaselineTick(), "own_entity": snapshot.OwnEntity(),
                      "complete": bool(snapshot.Complete()), "world": world, "refused": refused,
                      "variants": len(variants)}))


if __name__ == "__main__":
    main()

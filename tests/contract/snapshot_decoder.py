#!/usr/bin/env python3
"""A decoder of shiftcast's connected packet and ServerFrame snapshot (protocol version 6) written from
docs/protocol.md alone: the plaintext ServerFrame message byte by byte from the document's "5. Packet"
tables (kind, varints, flags, length-prefixed sections), the entity block bit by bit from its "Entity
block" tables, the predicted baseline from its "Prediction" rules (exact rationals here), the own state
from its "Own state" table (its position relative to the snapshot's own entity), and the compact
datagram header of the `packet_keep_alive` vector from the datagram table (opened with libsodium, called
through ctypes, when the shared library is installed). It decodes the document's `server_frame_snapshot`
test vector against the document's baseline (itself sent against the empty state: nothing predicted) and
the `entity_block_predicted` vector against the prediction from the document's A and B, and runs the
negative checks the document promises: every proper prefix of both blocks and non-zero padding; for the message
framing every proper prefix, a truncated varint, a non-shortest varint, a varint past 2^64, trailing
bytes, a zero-length section, reserved and inconsistent flag bits, an impossible baseline, an unknown
kind; for the datagram header the non-canonical forms. Usage:

    snapshot_decoder.py --doc docs/protocol.md [--generated DIR]

(`--generated` is accepted and unused: version 3 read the frame through the `flatc --python` bindings.)
Prints one JSON object: the frame's fields, the decoded world as [id, kind, flags, yaw, x, y, z] rows,
the own position as its three float bit patterns,
the predicted vector's world as the same rows, and how many malformed variants were refused out of how
many tried. tests/protocol/test_vectors_test.cpp
runs it and compares with the C++ library.
"""
import argparse
import ctypes
import ctypes.util
from fractions import Fraction
import json
import math
import os
import re
import struct

PROTOCOL_VERSION = 6

# The document's tiered widths ("Entity block").
COUNT = (5, 10, 32)
ID_GAP = (0, 3, 7, 12, 32)
KIND = (2, 8)
FLAGS = (1, 8)
POSITION = (10, 14, 18, 22, 32)
POSITION_DELTA = (0, 3, 5, 7, 10, 17, 33)
YAW_DELTA = (5, 10, 16)
PLAYER_YAW_DELTA = (2, 4, 6, 11)  # a player's yaw (kind 0) travels in 1/2048 turn: 32 of the u16's steps
PLAYER = 0
# The document's "Own state" table.
OWN_FLAGS = (2, 8)
GROUND_ID = (0, 8, 16, 32)
OWN_RESIDUAL = (8, 10, 12, 14, 16, 20)

# The document's baseline for the entity block vector: id -> (kind, flags, yaw, x, y, z), in quanta.
BASELINE = {1: (0, 0, 0, 0, 0, 0), 2: (1, 0, 100, 16, 32, 0), 3: (2, 1, 0, -5, 0, 7)}
SNAPSHOT_TICK, BASELINE_TICK = 100, 98  # the baseline was sent against the empty state (tick 0)

# The document's `entity_block_predicted` vector: A at tick 94, B at tick 98, the snapshot at tick 100.
PREDICTED_A = {1: (0, 0, 0, 0, 0, 0), 2: (1, 0, 65000, 16, 32, 0), 3: (2, 1, 0, -9, 0, 7),
               5: (0, 0, 0, 500, 0, 0), 6: (1, 0, 0, 0, 0, 300)}
PREDICTED_B = {1: (0, 0, 192, 160, -81, 0), 2: (1, 0, 100, 16, 32, 0), 3: (2, 1, 0, -5, 0, 7),
               4: (0, 0, 16384, 1000, -2000, 64), 5: (0, 0, 0, 540, 0, 0), 6: (1, 0, 0, 0, 0, 200)}
PREDICTED_TICKS = (94, 98, 100)


class Refused(Exception):
    pass


class Malformed(Refused):
    pass


class UnexpectedMessage(Refused):
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


def round_half_away(x):
    """The integer nearest to the rational x, halves away from zero."""
    r = math.floor(abs(x) + Fraction(1, 2))
    return r if x >= 0 else -r


def wrap(v, bits):
    """v mod 2^bits as a value in [-2^(bits-1), 2^(bits-1)): the shorter way round."""
    v %= 1 << bits
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def yaw_unit(kind):
    """The yaw's steps of 1/65536 turn per unit sent, and the bits of a turn: a player's 1/2048 turn."""
    return (32, 11) if kind == PLAYER else (1, 16)


def predict(b_state, a_state, ta, tb, n):
    """The document's "Prediction": B with each entity extrapolated from A through B to tick n."""
    if not (0 < ta < tb < n and n - tb <= 63 and tb - ta <= 63):
        return dict(b_state)
    out = {}
    for i, b in b_state.items():
        a = a_state.get(i)
        if a is None or b[1] & 1:  # not in A, or asleep: B's state
            out[i] = b
            continue
        ratio = Fraction(n - tb, tb - ta)
        xyz = [pb + round_half_away((pb - pa) * ratio) for pa, pb in zip(a[3:], b[3:])]
        if any(not -2**31 <= c < 2**31 for c in xyz):
            out[i] = b
            continue
        step, bits = yaw_unit(b[0])
        yb, ya = b[2] // step, a[2] // step
        yaw = (yb + round_half_away(wrap(yb - ya, bits) * ratio)) % (1 << bits) * step
        out[i] = (b[0], b[1], yaw, *xyz)
    return out


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
    if count > b.left() // 2:  # an id gap and a change code: at least 2 bits
        raise Malformed("changed count")
    previous = -1
    for _ in range(count):
        previous += 1 + b.t(ID_GAP)
        if previous > 0xFFFFFFFF:
            raise Malformed("id")
        base = baseline.get(previous)
        if base is None:
            kind, flags = b.t(KIND), b.t(FLAGS)
            if kind > 255 or flags > 255:
                raise Malformed("range")
            step, bits = yaw_unit(kind)
            yaw = b.u(bits) * step
            xyz = [b.ts(POSITION) for _ in range(3)]
            if any(not -2**31 <= c < 2**31 for c in xyz):
                raise Malformed("range")
        else:
            kind, flags = base[0], base[1]
            xyz = list(base[3:])
            # The change code: 1 position and yaw, 01 position, 001 yaw, 0001 kind/flags (then a
            # position bit and a yaw bit), 0000 nothing.
            moved = turned = False
            if b.u(1):
                moved = turned = True
            elif b.u(1):
                moved = True
            elif b.u(1):
                turned = True
            elif b.u(1):
                new_kind, new_flags = b.t(KIND), b.t(FLAGS)
                if new_kind > 255 or new_flags > 255 or (new_kind, new_flags) == (kind, flags):
                    raise Malformed("kind/flags")
                kind, flags = new_kind, new_flags
                moved, turned = bool(b.u(1)), bool(b.u(1))
            if moved:
                deltas = [b.ts(POSITION_DELTA) for _ in range(3)]
                if not any(deltas):
                    raise Malformed("position flagged, unchanged")
                xyz = [c + d for c, d in zip(xyz, deltas)]
                if any(not -2**31 <= c < 2**31 for c in xyz):
                    raise Malformed("range")
            step, bits = yaw_unit(kind)  # the kind the entity has now
            d = 0
            if turned:
                d = b.ts(PLAYER_YAW_DELTA if kind == PLAYER else YAW_DELTA)
                if d == 0 or not -(1 << (bits - 1)) <= d < 1 << (bits - 1):
                    raise Malformed("yaw")
            yaw = (base[2] // step + d) % (1 << bits) * step
        changed[previous] = (kind, flags, yaw, *xyz)
    used = b.at
    b.finish()
    if set(removed) & set(changed):
        raise Malformed("both changed and removed")
    world = {i: e for i, e in baseline.items() if i not in removed}
    world.update(changed)
    return [[i, *world[i]] for i in sorted(world)], used


def float_bits(x):
    """The IEEE-754 single-precision pattern of the float nearest x."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def decode_own(data, reference):
    """The own state ("Own state"); the position's float bit patterns, a relative coordinate rebuilt from
    `reference` (the own entity's position in quanta in the frame's snapshot)."""
    b = Bits(data)
    flags = b.t(OWN_FLAGS)
    position = []
    for i in range(3):
        if b.u(1):  # relative
            if reference is None:
                raise Refused("a relative coordinate without its snapshot's own entity")
            position.append((float_bits(reference[i] / 16) + b.ts(OWN_RESIDUAL)) % 2**32)
        else:
            whole = b.u(32)
            if reference is not None:
                r = (whole - float_bits(reference[i] / 16)) % 2**32
                r = r - 2**32 if r >= 2**31 else r
                if (2 * r if r >= 0 else -2 * r - 1) < 2**20:
                    raise Malformed("a whole coordinate whose residual fits the relative form")
            position.append(whole)
    for _ in range(3):  # velocity: a non-zero flag, then the pattern, never +0
        if b.u(1) and b.u(32) == 0:
            raise Malformed("+0 velocity in its long form")
    form = b.u(2)
    if form == 2:
        normal = [b.u(32) for _ in range(3)]
        if normal in ([0, 0, 0], [0, 0, float_bits(1.0)]):
            raise Malformed("a short normal in its long form")
    elif form == 3:
        raise Malformed("normal form 3")
    entity, brush = b.t(GROUND_ID), b.t(GROUND_ID)
    if flags > 255 or entity > 0xFFFFFFFF or brush > 0xFFFFFFFF:
        raise Malformed("range")
    b.finish()
    return position


# The document's "5. Packet": the plaintext message kinds, the ServerFrame's flags.
CLIENT_FRAME, SERVER_FRAME, KEEP_ALIVE, DISCONNECT = 0, 1, 2, 3
SNAPSHOT, COMPLETE, OWN, EVENTS = 1, 2, 4, 8


class Bytes:
    """The plaintext message: bytes, varints (unsigned LEB128, shortest form) and sections."""

    def __init__(self, data):
        self.data = data
        self.at = 0

    def u8(self):
        if self.at >= len(self.data):
            raise Malformed("past the end")
        self.at += 1
        return self.data[self.at - 1]

    def fixed(self, n):
        if self.at + n > len(self.data):
            raise Malformed("past the end")
        self.at += n
        return self.data[self.at - n:self.at]

    def varint(self, limit=2**64):
        v = 0
        for i in range(10):
            byte = self.u8()
            v |= (byte & 0x7F) << (7 * i)
            if byte & 0x80 == 0:
                if i > 0 and byte == 0:
                    raise Malformed("varint not in its shortest form")
                if v >= limit:
                    raise Malformed("varint out of range")
                return v
        raise Malformed("varint longer than 10 bytes")

    def section(self):
        n = self.varint()
        if n == 0:
            raise Malformed("zero-length section")
        if n > len(self.data) - self.at:
            raise Malformed("section past the end")
        return self.fixed(n)

    def finish(self):
        if self.at != len(self.data):
            raise Malformed("trailing bytes")


def parse_message(data):
    """One plaintext message, as the document's tables say; returns (kind, fields)."""
    r = Bytes(data)
    kind = r.u8()
    m = {}
    if kind == CLIENT_FRAME:
        m["commands_packed"] = r.fixed(len(data) - 1)
    elif kind == SERVER_FRAME:
        m["tick"], m["input_ack"] = r.varint(), r.varint()
        flags = r.u8()
        if flags & 0xF0:
            raise Malformed("reserved ServerFrame flag")
        if flags & COMPLETE and not flags & SNAPSHOT:
            raise Malformed("complete without a snapshot")
        if flags & SNAPSHOT:
            if m["tick"] < 1:
                raise Malformed("a snapshot at tick 0")
            offset = r.varint()
            if offset > 0 and m["tick"] - offset < 1:
                raise Malformed("baseline before tick 1")
            m["snapshot"] = {"tick": m["tick"], "baseline_tick": m["tick"] - offset if offset else 0,
                             "own_entity": r.varint(2**32), "complete": bool(flags & COMPLETE),
                             "block": r.section()}
        if flags & OWN:
            m["own"] = r.section()
        if flags & EVENTS:
            m["events"] = r.section()
    elif kind == KEEP_ALIVE:
        m["tick"], m["events_received"] = r.varint(), r.varint()
        flags = r.u8()
        if flags & 0xFE:
            raise Malformed("reserved KeepAlive flag")
        if flags & 1:
            m["session"] = struct.unpack("<HHII", r.fixed(12))
    elif kind == DISCONNECT:
        m["code"] = r.u8()
    else:
        raise UnexpectedMessage("kind %d" % kind)
    r.finish()
    return kind, m


def parse_header(datagram):
    """The compact datagram's header: (sequence low 16, ack low 16 or None, ack_bits, sealed)."""
    if len(datagram) < 1:
        raise Malformed("empty")
    prefix = datagram[0]
    if prefix & 3 != 1:
        raise Malformed("not a connected packet")
    if prefix & 0x80 or (not prefix & 4 and prefix & 0x78):
        raise Malformed("reserved prefix bits")
    at = 3
    ack = ack_bits = None
    if prefix & 4:
        at = 5
        ack_bits = 0
        for k in range(4):
            byte = 0xFF
            if prefix & (8 << k):
                if at >= len(datagram):
                    raise Malformed("past the end")
                byte = datagram[at]
                at += 1
                if byte == 0xFF:
                    raise Malformed("an ack_bits byte of 0xFF sent")
            ack_bits |= byte << (8 * k)
    if len(datagram) < at + 16 + 1:
        raise Malformed("shorter than header, tag and one plaintext byte")
    sequence = struct.unpack_from("<H", datagram, 1)[0]
    if prefix & 4:
        ack = struct.unpack_from("<H", datagram, 3)[0]
    return sequence, ack, ack_bits, datagram[at:]


def full_sequence(newest, low16):
    d = (low16 - newest) % 65536
    if d >= 32768:
        d -= 65536
    s = newest + d
    return s + 65536 if s < 1 else s


def full_ack(newest_sent, low16):
    a = newest_sent - ((newest_sent - low16) % 65536)
    if a < 1:
        raise Malformed("ack names no sequence sent")
    return a


def open_keep_alive(datagram):
    """The documented keep-alive, client to server: (sequence, plaintext), or None without libsodium."""
    low16, ack16, ack_bits, sealed = parse_header(datagram)
    name = ctypes.util.find_library("sodium")
    if name is None:
        return None
    sodium = ctypes.CDLL(name)
    if sodium.sodium_init() < 0:
        return None
    sequence = full_sequence(0, low16)  # the server's first packet from this client
    ack = 0 if ack16 is None else full_ack(0, ack16)
    ad = b"SHC1" + struct.pack("<HBIQQQI", PROTOCOL_VERSION, 0, 7, 1001, sequence, ack, ack_bits or 0)
    nonce = bytes(4) + struct.pack("<Q", sequence)
    key = bytes(range(0x40, 0x60))  # the document's client-to-server key
    out = ctypes.create_string_buffer(len(sealed))
    out_len = ctypes.c_ulonglong(0)
    if sodium.crypto_aead_chacha20poly1305_ietf_decrypt(
            out, ctypes.byref(out_len), None, sealed, ctypes.c_ulonglong(len(sealed)), ad,
            ctypes.c_ulonglong(len(ad)), nonce, key) != 0:
        raise SystemExit("the documented keep-alive does not open")
    return sequence, out.raw[:out_len.value]


def varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v >= 0x80 else 0))
        v >>= 7
        if not v:
            return bytes(out)


def framing_variants(frame):
    """Malformed (or unexpected) neighbours of the documented ServerFrame message."""
    variants = [frame[:cut] for cut in range(len(frame))]  # every proper prefix
    variants.append(frame[:1] + b"\xe4")  # a truncated varint (tick, its continuation bit set)
    variants.append(frame[:1] + b"\xe4\x00" + frame[2:])  # tick 100 in two bytes: not the shortest form
    variants.append(frame[:1] + b"\xff" * 9 + b"\x02" + frame[2:])  # a tick past 2^64 - 1
    variants.append(frame[:1] + b"\xff" * 10 + b"\x00" + frame[2:])  # an 11-byte varint
    variants.append(frame + b"\x00")  # a trailing byte
    variants.append(frame[:3] + bytes([frame[3] | OWN]) + frame[4:] + b"\x00")  # an own section of 0 bytes
    variants.append(frame[:3] + bytes([frame[3] | EVENTS]) + frame[4:] + b"\x00")  # events, 0 bytes
    for bit in range(4, 8):  # a reserved flag bit
        variants.append(frame[:3] + bytes([frame[3] | (1 << bit)]) + frame[4:])
    variants.append(frame[:3] + bytes([COMPLETE]))  # complete without a snapshot
    variants.append(frame[:1] + b"\x00" + frame[2:])  # a snapshot at tick 0
    variants.append(frame[:4] + varint(100) + frame[5:])  # baseline_offset 100: baseline tick 0
    variants.append(frame[:5] + varint(2**32) + frame[6:])  # own_entity past 2^32 - 1
    variants.append(frame[:6] + bytes([frame[6] + 1]) + frame[7:])  # block_bytes one past the end
    variants.append(bytes([4]) + frame[1:])  # an unknown kind: UnexpectedMessage
    return variants


def header_variants():
    """Non-canonical or impossible compact headers (each followed by a tag and one byte)."""
    body = bytes(17)
    return [b"", b"\x02\x01\x00" + body, b"\x03\x01\x00" + body,  # prefix & 3 is not 1
            b"\x81\x01\x00" + body,  # bit 7 set
            b"\x09\x01\x00\x00" + body,  # an ack_bits byte without an ack
            b"\x0d\x01\x00\x01\x00\xff" + body,  # an ack_bits byte of 0xFF sent
            b"\x05\x01\x00\x01\x00" + bytes(16),  # no plaintext byte
            b"\x7d\x01\x00\x01\x00\x00\x00\x00"]  # ack_bits promised, not there


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

    with open(args.doc) as f:
        doc = f.read()
    data = vector(doc, "server_frame_snapshot")
    try:
        kind, frame = parse_message(data)
    except Refused as e:
        raise SystemExit("the documented ServerFrame does not parse: %s" % e)
    if kind != SERVER_FRAME or "snapshot" not in frame:
        raise SystemExit("not a ServerFrame with a snapshot")
    snapshot = frame["snapshot"]
    block = snapshot["block"]
    if (snapshot["tick"], snapshot["baseline_tick"]) != (SNAPSHOT_TICK, BASELINE_TICK):
        raise SystemExit("the documented ServerFrame is not the documented snapshot")
    baseline = predict(BASELINE, {}, 0, BASELINE_TICK, SNAPSHOT_TICK)
    world, used = decode_block(block, baseline)
    if block != vector(doc, "entity_block"):
        raise SystemExit("the frame's block is not the documented entity block")
    if "own" not in frame:
        raise SystemExit("the documented ServerFrame has no own section")
    own_row = next((row for row in world if row[0] == snapshot["own_entity"]), None)
    own_position = decode_own(frame["own"], own_row[4:] if own_row else None)
    predicted_block = vector(doc, "entity_block_predicted")
    predicted_baseline = predict(PREDICTED_B, PREDICTED_A, *PREDICTED_TICKS)
    if predicted_baseline == PREDICTED_B:
        raise SystemExit("nothing of the documented B is predicted")
    predicted_world, predicted_used = decode_block(predicted_block, predicted_baseline)

    keep_alive = open_keep_alive(vector(doc, "packet_keep_alive"))
    if keep_alive is not None:
        sequence, plaintext = keep_alive
        kind, message = parse_message(plaintext)
        if (sequence, kind, message) != (1, KEEP_ALIVE, {"tick": 100, "events_received": 0}):
            raise SystemExit("the documented keep-alive is not KeepAlive{tick 100} at sequence 1")

    refused = tried = 0
    block_variants = [block[:cut] for cut in range(len(block))]
    for bit in range(used, len(block) * 8):  # a one in the padding
        variant = bytearray(block)
        variant[bit // 8] |= 1 << (bit % 8)
        block_variants.append(bytes(variant))
    block_variants.append(block + b"\x00")  # a whole byte more
    checks = [(v, lambda v: decode_block(v, baseline)) for v in block_variants]
    predicted_variants = [predicted_block[:cut] for cut in range(len(predicted_block))]
    for bit in range(predicted_used, len(predicted_block) * 8):
        variant = bytearray(predicted_block)
        variant[bit // 8] |= 1 << (bit % 8)
        predicted_variants.append(bytes(variant))
    predicted_variants.append(predicted_block + b"\x00")
    checks += [(v, lambda v: decode_block(v, predicted_baseline)) for v in predicted_variants]
    own_bytes, own_reference = frame["own"], own_row[4:]
    checks += [(own_bytes[:cut], lambda v: decode_own(v, own_reference)) for cut in range(len(own_bytes))]
    checks += [(own_bytes, lambda v: decode_own(v, None))]  # relative, with no own entity to resolve it
    checks += [(v, parse_message) for v in framing_variants(data)]
    checks += [(v, parse_header) for v in header_variants()]
    for v, decode in checks:
        tried += 1
        try:
            decode(v)
        except Refused:
            refused += 1
    print(json.dumps({"tick": frame["tick"], "input_ack": frame["input_ack"], "snapshot_tick": snapshot["tick"],
                      "baseline_tick": snapshot["baseline_tick"], "own_entity": snapshot["own_entity"],
                      "complete": snapshot["complete"], "world": world, "predicted_world": predicted_world,
                      "own_position_bits": own_position,
                      "keep_alive_opened": keep_alive is not None, "refused": refused, "variants": tried}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A shiftcast RPC client in Python, built only on the schema: protocol/shiftcast.fbs compiled by
`flatc --python` and Debian's python3-flatbuffers. The contract test runs it against the real server and
checks its answers against the C++ world query. Usage:

    raycast_client.py --port 40001 --match 1 --origin X Y Z --direction X Y Z --max-distance D
        [--key-file FILE]   (the service key, sent as RaycastRequest.api_key; reads need it)
        [--generated DIR]   (where flatc wrote the Python package; default: $SHIFTCAST_PYTHON_PROTOCOL_DIR)

Prints one JSON object: the reply's hit fields and the tick it was answered at, or {"error": code}.

Other scripts import `raycast()` (e.g. tests/browser/read_spectator_pages.py, which also rewinds with
AsOf Tick and masks entity layers); it returns the same fields plus the rewind clamp.
"""
import argparse
import json
import os
import socket
import struct
import sys


PROTOCOL_VERSION = 6  # protocol/wire_constants.hpp kProtocolVersion
REQUEST_ID = 4242
CLAMPS = {0: "None", 1: "TooOld", 2: "InFuture", 3: "Empty"}  # RewindClamp


class ProtocolError(Exception):
    """The server answered something other than a RaycastReply or an RpcError to our request."""


def raycast(port, match, origin, direction, max_distance, key=None, as_of_tick=None, mask=0xFFFFFFFF,
            level=True, generated=None, host="127.0.0.1", timeout=20):
    """One RaycastRequest over a fresh connection. `key` is the service key itself (not a file);
    `as_of_tick` None asks for the newest tick (AsOf Now), else AsOf Tick at that (possibly fractional)
    tick. Returns the reply's hit fields, the tick used and the rewind clamp, or {"error": code} when
    the server answered with an RpcError; raises ProtocolError on anything else."""
    if generated and generated not in sys.path:
        sys.path.insert(0, generated)
    import flatbuffers
    from shiftcast.wire import (AsOf, AsOfKind, Envelope, Message, QueryFilter, RaycastRequest, RpcError,
                                RaycastReply, Vec3f)

    b = flatbuffers.Builder(256)
    api_key = b.CreateString(key) if key is not None else None
    QueryFilter.QueryFilterStart(b)
    QueryFilter.QueryFilterAddMask(b, mask)
    QueryFilter.QueryFilterAddLevel(b, level)
    query_filter = QueryFilter.QueryFilterEnd(b)
    AsOf.AsOfStart(b)
    if as_of_tick is not None:
        AsOf.AsOfAddKind(b, AsOfKind.AsOfKind.Tick)
        AsOf.AsOfAddTick(b, float(as_of_tick))
    as_of = AsOf.AsOfEnd(b)
    RaycastRequest.RaycastRequestStart(b)
    RaycastRequest.RaycastRequestAddMatchId(b, match)
    RaycastRequest.RaycastRequestAddOrigin(b, Vec3f.CreateVec3f(b, *origin))
    RaycastRequest.RaycastRequestAddDirection(b, Vec3f.CreateVec3f(b, *direction))
    RaycastRequest.RaycastRequestAddMaxDistance(b, max_distance)
    RaycastRequest.RaycastRequestAddFilter(b, query_filter)
    RaycastRequest.RaycastRequestAddAsOf(b, as_of)
    if api_key is not None:
        RaycastRequest.RaycastRequestAddApiKey(b, api_key)
    ray = RaycastRequest.RaycastRequestEnd(b)
    Envelope.EnvelopeStart(b)
    Envelope.EnvelopeAddVersion(b, PROTOCOL_VERSION)
    Envelope.EnvelopeAddRequestId(b, REQUEST_ID)
    Envelope.EnvelopeAddMessageType(b, Message.Message.RaycastRequest)
    Envelope.EnvelopeAddMessage(b, ray)
    envelope = Envelope.EnvelopeEnd(b)
    b.Finish(envelope, file_identifier=b"SHC1")
    payload = bytes(b.Output())

    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(struct.pack("<I", len(payload)) + payload)
        header = recv_exactly(s, 4)
        (length,) = struct.unpack("<I", header)
        reply = recv_exactly(s, length)

    if reply[4:8] != b"SHC1":
        raise ProtocolError("wrong identifier")
    env = Envelope.Envelope.GetRootAs(reply, 0)
    if env.RequestId() != REQUEST_ID:
        raise ProtocolError("request id %d" % env.RequestId())
    if env.MessageType() == Message.Message.RpcError:
        error = RpcError.RpcError()
        error.Init(env.Message().Bytes, env.Message().Pos)
        return {"error": error.Code()}
    if env.MessageType() != Message.Message.RaycastReply:
        raise ProtocolError("message type %d" % env.MessageType())
    r = RaycastReply.RaycastReply()
    r.Init(env.Message().Bytes, env.Message().Pos)
    hit = r.Hit()
    end = hit.EndPosition()
    normal = hit.Normal()
    return {
        "hit": bool(hit.Hit()),
        "fraction": repr(hit.Fraction()),
        "end": [repr(end.X()), repr(end.Y()), repr(end.Z())],
        "normal": [repr(normal.X()), repr(normal.Y()), repr(normal.Z())],
        "brush": hit.Brush(),
        "entity": hit.Entity(),
        "tick_used": r.Rewind().TickUsed(),
        "clamp": CLAMPS.get(r.Rewind().Clamp(), r.Rewind().Clamp()),
    }


# What the command line prints: the fields it always printed, in that order.
CLI_FIELDS = ("hit", "fraction", "end", "normal", "brush", "entity", "tick_used")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--match", type=int, default=1)
    parser.add_argument("--origin", type=float, nargs=3, required=True)
    parser.add_argument("--direction", type=float, nargs=3, required=True)
    parser.add_argument("--max-distance", type=float, default=1000.0)
    parser.add_argument("--mask", type=int, default=0xFFFFFFFF)
    parser.add_argument("--key-file", default="")
    parser.add_argument("--generated", default=os.environ.get("SHIFTCAST_PYTHON_PROTOCOL_DIR", ""))
    args = parser.parse_args()
    sys.path.insert(0, args.generated)

    key = None
    if args.key_file:
        with open(args.key_file) as f:
            key = f.readline().strip()
    try:
        answer = raycast(args.port, args.match, args.origin, args.direction, args.max_distance, key=key,
                         mask=args.mask)
    except ProtocolError as e:
        print(json.dumps({"error": str(e)}))
        return 1
    if "error" in answer:
        print(json.dumps(answer))
        return 0
    print(json.dumps({name: answer[name] for name in CLI_FIELDS}))
    return 0


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("server closed the connection")
        data += chunk
    return data


if __name__ == "__main__":
    sys.exit(main())

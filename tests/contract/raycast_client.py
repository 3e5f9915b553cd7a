#!/usr/bin/env python3
"""A shiftcast RPC client in Python, built only on the schema: protocol/shiftcast.fbs compiled by
`flatc --python` and Debian's python3-flatbuffers. The contract test runs it against the real server and
checks its answers against the C++ world query. Usage:

    raycast_client.py --port 40001 --match 1 --origin X Y Z --direction X Y Z --max-distance D
        [--key-file FILE]   (the service key, sent as RaycastRequest.api_key; reads need it)
        [--generated DIR]   (where flatc wrote the Python package; default: $SHIFTCAST_PYTHON_PROTOCOL_DIR)

Prints one JSON object: the reply's hit fields and the tick it was answered at, or {"error": code}.
"""
import argparse
import json
import os
import socket
import struct
import sys


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

    import flatbuffers
    from shiftcast.wire import (AsOf, Envelope, Message, QueryFilter, RaycastRequest, RpcError,
                                RaycastReply, Vec3f)

    protocol_version = 6  # protocol/wire_constants.hpp kProtocolVersion
    request_id = 4242

    b = flatbuffers.Builder(256)
    api_key = None
    if args.key_file:
        with open(args.key_file) as f:
            api_key = b.CreateString(f.readline().strip())
    QueryFilter.QueryFilterStart(b)
    QueryFilter.QueryFilterAddMask(b, args.mask)
    QueryFilter.QueryFilterAddLevel(b, True)
    query_filter = QueryFilter.QueryFilterEnd(b)
    AsOf.AsOfStart(b)
    as_of = AsOf.AsOfEnd(b)
    RaycastRequest.RaycastRequestStart(b)
    RaycastRequest.RaycastRequestAddMatchId(b, args.match)
    RaycastRequest.RaycastRequestAddOrigin(b, Vec3f.CreateVec3f(b, *args.origin))
    RaycastRequest.RaycastRequestAddDirection(b, Vec3f.CreateVec3f(b, *args.direction))
    RaycastRequest.RaycastRequestAddMaxDistance(b, args.max_distance)
    RaycastRequest.RaycastRequestAddFilter(b, query_filter)
    RaycastRequest.RaycastRequestAddAsOf(b, as_of)
    if api_key is not None:
        RaycastRequest.RaycastRequestAddApiKey(b, api_key)
    ray = RaycastRequest.RaycastRequestEnd(b)
    Envelope.EnvelopeStart(b)
    Envelope.EnvelopeAddVersion(b, protocol_version)
    Envelope.EnvelopeAddRequestId(b, request_id)
    Envelope.EnvelopeAddMessageType(b, Message.Message.RaycastRequest)
    Envelope.EnvelopeAddMessage(b, ray)
    envelope = Envelope.EnvelopeEnd(b)
    b.Finish(envelope, file_identifier=b"SHC1")
    payload = bytes(b.Output())

    with socket.create_connection(("127.0.0.1", args.port), timeout=20) as s:
        s.sendall(struct.pack("<I", len(payload)) + payload)
        header = recv_exactly(s, 4)
        (length,) = struct.unpack("<I", header)
        reply = recv_exactly(s, length)

    if reply[4:8] != b"SHC1":
        print(json.dumps({"error": "wrong identifier"}))
        return 1
    env = Envelope.Envelope.GetRootAs(reply, 0)
    if env.RequestId() != request_id:
        print(json.dumps({"error": "request id %d" % env.RequestId()}))
        return 1
    if env.MessageType() == Message.Message.RpcError:
        error = RpcError.RpcError()
        error.Init(env.Message().Bytes, env.Message().Pos)
        print(json.dumps({"error": error.Code()}))
        return 0
    if env.MessageType() != Message.Message.RaycastReply:
        print(json.dumps({"error": "message type %d" % env.MessageType()}))
        return 1
    r = RaycastReply.RaycastReply()
    r.Init(env.Message().Bytes, env.Message().Pos)
    hit = r.Hit()
    end = hit.EndPosition()
    normal = hit.Normal()
    print(json.dumps({
        "hit": bool(hit.Hit()),
        "fraction": repr(hit.Fraction()),
        "end": [repr(end.X()), repr(end.Y()), repr(end.Z())],
        "normal": [repr(normal.X()), repr(normal.Y()), repr(normal.Z())],
        "brush": hit.Brush(),
        "entity": hit.Entity(),
        "tick_used": r.Rewind().TickUsed(),
    }))
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

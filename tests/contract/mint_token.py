#!/usr/bin/env python3
"""Connect tokens minted in Python from docs/protocol.md alone ("The sealed connect token", "Token
associated data", "ConnectionRequest" and "Minting tokens"): the reference a matchmaker in another
language can copy, and the independent oracle the tests hold shiftcast-token's bytes against. It uses
the bindings `flatc --python` generates from protocol/shiftcast.fbs, Debian's python3-flatbuffers and
python3-nacl (libsodium's XChaCha20-Poly1305-IETF). Run it with /usr/bin/python3, where those live.

    mint_token.py --key-file FILE --server IP:PORT --server-instance HEX16 --match ID --client ID
                  [--valid-seconds N | --expires-at UNIX] [--now UNIX] [--format json|request]
                  [--nonce HEX48] [--client-to-server-key HEX64] [--server-to-client-key HEX64]
                  [--generated DIR]
    mint_token.py --matches-url http://127.0.0.1:40002/api/matches --key-file FILE --match ID --client ID

The second form reads the server's address and instance from its GET /api/matches, as a matchmaker
would. Output is byte for byte what shiftcast-token prints for the same inputs: the JSON of
docs/protocol.md ("Minting tokens"), or with --format request the ConnectionRequest datagram's bytes.
Bad input exits 2 with the reason on stderr.
"""
import argparse
import json
import os
import struct
import sys
import time
import urllib.request

PROTOCOL_VERSION = 6  # protocol/wire_constants.hpp kProtocolVersion
FILE_IDENTIFIER = b"SHC1"
KEY_BYTES = 32
NONCE_BYTES = 24
MIN_REQUEST_BYTES = 1000  # kMinRequestBytes: the padding rule of ConnectionRequest
MAX_VALID_SECONDS = 3600  # kMaxTokenValidSeconds
DEFAULT_VALID_SECONDS = 30

# The JSON fields, in the order docs/protocol.md gives them; True: a string (hex for bytes).
JSON_FIELDS = [("server_address", True), ("match_id", False), ("client_id", False), ("expires_at", False),
               ("token_nonce", True), ("sealed_token", True), ("client_to_server_key", True),
               ("server_to_client_key", True)]


class MintError(Exception):
    """An input a token cannot be minted from; the message names it and the rule."""


def _bindings(generated):
    if generated and generated not in sys.path:
        sys.path.insert(0, generated)
    import flatbuffers  # noqa: F401  (imported here so --help works without the bindings)
    from shiftcast.wire import ConnectionRequest, ConnectTokenPrivate, Envelope, Message
    return flatbuffers, ConnectionRequest, ConnectTokenPrivate, Envelope, Message


def token_associated_data(match_id, client_id, expires_at):
    """"SHC1" || version (u16) || match_id (u32) || client_id (u64) || expires_at (u64), little-endian."""
    return FILE_IDENTIFIER + struct.pack("<HIQQ", PROTOCOL_VERSION, match_id, client_id, expires_at)


def _finish_envelope(builder, envelope_mod, message_type, message):
    # Envelope fields as the C++ builder adds them: request_id (0: left out), message, version, type.
    envelope_mod.EnvelopeStart(builder)
    envelope_mod.EnvelopeAddMessage(builder, message)
    envelope_mod.EnvelopeAddVersion(builder, PROTOCOL_VERSION)
    envelope_mod.EnvelopeAddMessageType(builder, message_type)
    builder.Finish(envelope_mod.EnvelopeEnd(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def token_private_plaintext(server_address, match_id, client_id, expires_at, c2s, s2c, server_instance,
                            generated=None):
    """Envelope{ConnectTokenPrivate}: strings and vectors first, in field order, then the table's
    scalars and offsets from the widest down (the order of the C++ builder, so the bytes match)."""
    flatbuffers, _, private, envelope, message = _bindings(generated)
    b = flatbuffers.Builder(256)
    address = b.CreateString(server_address)
    c2s_vec = b.CreateByteVector(c2s)
    s2c_vec = b.CreateByteVector(s2c)
    private.ConnectTokenPrivateStart(b)
    private.ConnectTokenPrivateAddServerInstance(b, server_instance)
    private.ConnectTokenPrivateAddExpiresAt(b, expires_at)
    private.ConnectTokenPrivateAddClientId(b, client_id)
    private.ConnectTokenPrivateAddServerToClientKey(b, s2c_vec)
    private.ConnectTokenPrivateAddClientToServerKey(b, c2s_vec)
    private.ConnectTokenPrivateAddServerAddress(b, address)
    private.ConnectTokenPrivateAddMatchId(b, match_id)
    return _finish_envelope(b, envelope, message.Message.ConnectTokenPrivate,
                            private.ConnectTokenPrivateEnd(b))


def mint(token_key, server_address, server_instance, match_id, client_id, expires_at, nonce=None, c2s=None,
         s2c=None, generated=None):
    """The token as a dict of the JSON fields (bytes as bytes). Fresh random nonce and keys unless given."""
    from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_encrypt
    nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
    c2s = c2s if c2s is not None else os.urandom(KEY_BYTES)
    s2c = s2c if s2c is not None else os.urandom(KEY_BYTES)
    plain = token_private_plaintext(server_address, match_id, client_id, expires_at, c2s, s2c, server_instance,
                                    generated)
    sealed = crypto_aead_xchacha20poly1305_ietf_encrypt(
        plain, token_associated_data(match_id, client_id, expires_at), nonce, token_key)
    return {"server_address": server_address, "match_id": match_id, "client_id": client_id,
            "expires_at": expires_at, "token_nonce": nonce, "sealed_token": sealed,
            "client_to_server_key": c2s, "server_to_client_key": s2c}


def _request_with_padding(token, padding, generated):
    flatbuffers, request, _, envelope, message = _bindings(generated)
    b = flatbuffers.Builder(MIN_REQUEST_BYTES)
    nonce = b.CreateByteVector(token["token_nonce"])
    sealed = b.CreateByteVector(token["sealed_token"])
    zeros = b.CreateByteVector(bytes(padding))
    request.ConnectionRequestStart(b)
    request.ConnectionRequestAddExpiresAt(b, token["expires_at"])
    request.ConnectionRequestAddClientId(b, token["client_id"])
    request.ConnectionRequestAddPadding(b, zeros)
    request.ConnectionRequestAddSealedToken(b, sealed)
    request.ConnectionRequestAddTokenNonce(b, nonce)
    request.ConnectionRequestAddMatchId(b, token["match_id"])
    return _finish_envelope(b, envelope, message.Message.ConnectionRequest, request.ConnectionRequestEnd(b))


def connection_request(token, generated=None):
    """The padded ConnectionRequest datagram: grow the padding by the shortfall until the datagram is at
    least 1000 bytes (the same steps for the same token, so the bytes are deterministic)."""
    padding = 0
    datagram = _request_with_padding(token, padding, generated)
    while len(datagram) < MIN_REQUEST_BYTES:
        padding += MIN_REQUEST_BYTES - len(datagram)
        datagram = _request_with_padding(token, padding, generated)
    return datagram


def token_json(token):
    """The JSON text of docs/protocol.md, "Minting tokens": two-space indent, this field order, bytes as
    lowercase hex, a final newline."""
    ordered = {name: (token[name].hex() if isinstance(token[name], bytes) else token[name])
               for name, _ in JSON_FIELDS}
    return json.dumps(ordered, indent=2) + "\n"


def _hex_bytes(text, size, what):
    try:
        value = bytes.fromhex(text)
    except ValueError:
        value = b""
    if len(value) != size or len(text) != 2 * size:
        raise MintError(f"{what}: must be {2 * size} hex digits")
    return value


def _whole(text, what, maximum):
    if not text.isdigit() or int(text) > maximum:
        raise MintError(f"{what} {text}: must be a whole number 0..{maximum}")
    return int(text)


def read_token_key(path):
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            line = f.readline().strip()
    except OSError as e:
        raise MintError(f"--key-file {path}: cannot read it ({e.strerror})")
    return _hex_bytes(line, KEY_BYTES, f"--key-file {path}: the first line")


def server_from_matches(url):
    """(address, instance) from the server's GET /api/matches, as a matchmaker reads them."""
    with urllib.request.urlopen(url, timeout=10) as reply:
        listing = json.loads(reply.read().decode("utf-8"))
    return listing["server_address"], listing["server_instance"]


def _check(server_address, instance, match_id, client_id, expires_at, now):
    host, _, port = server_address.rpartition(":")
    if not host or not port.isdigit() or port.startswith("0") or not 1 <= int(port) <= 65535:
        raise MintError(f'server address "{server_address}": must be ip:port or [ipv6]:port')
    if instance == 0:
        raise MintError("server instance 0000000000000000: no server has instance 0")
    if match_id == 0 or client_id == 0:
        raise MintError("match and client ids start at 1")
    if expires_at <= now:
        raise MintError(f"expiry {expires_at}: not after now ({now})")
    if expires_at - now > MAX_VALID_SECONDS:
        raise MintError(f"expiry {expires_at}: more than {MAX_VALID_SECONDS} s from now")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--key-file", required=True)
    p.add_argument("--server")
    p.add_argument("--server-instance")
    p.add_argument("--matches-url", help="read --server and --server-instance from GET /api/matches")
    p.add_argument("--match", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--valid-seconds")
    p.add_argument("--expires-at")
    p.add_argument("--now")
    p.add_argument("--format", choices=["json", "request"], default="json")
    p.add_argument("--nonce")
    p.add_argument("--client-to-server-key")
    p.add_argument("--server-to-client-key")
    p.add_argument("--generated", default=os.environ.get("SHIFTCAST_PYTHON_PROTOCOL_DIR"))
    a = p.parse_args(argv)
    try:
        if a.matches_url:
            server, instance_hex = server_from_matches(a.matches_url)
        elif a.server and a.server_instance:
            server, instance_hex = a.server, a.server_instance
        else:
            raise MintError("give --server and --server-instance, or --matches-url")
        instance = int.from_bytes(_hex_bytes(instance_hex, 8, "--server-instance"), "big")
        now = _whole(a.now, "--now", 2**64 - 1) if a.now else int(time.time())
        if a.valid_seconds and a.expires_at:
            raise MintError("--valid-seconds and --expires-at: give one of them")
        if a.expires_at:
            expires_at = _whole(a.expires_at, "--expires-at", 2**64 - 1)
        else:
            valid = _whole(a.valid_seconds or str(DEFAULT_VALID_SECONDS), "--valid-seconds", MAX_VALID_SECONDS)
            expires_at = now + valid
        match_id = _whole(a.match, "--match", 2**32 - 1)
        client_id = _whole(a.client, "--client", 2**64 - 1)
        _check(server, instance, match_id, client_id, expires_at, now)
        fixed = {"nonce": (a.nonce, NONCE_BYTES), "c2s": (a.client_to_server_key, KEY_BYTES),
                 "s2c": (a.server_to_client_key, KEY_BYTES)}
        given = {k: _hex_bytes(v, n, "--" + k) if v else None for k, (v, n) in fixed.items()}
        token = mint(read_token_key(a.key_file), server, instance, match_id, client_id, expires_at,
                     given["nonce"], given["c2s"], given["s2c"], a.generated)
    except MintError as e:
        print(f"mint_token.py: {e}", file=sys.stderr)
        return 2
    if a.format == "json":
        sys.stdout.write(token_json(token))
    else:
        sys.stdout.buffer.write(connection_request(token, a.generated))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

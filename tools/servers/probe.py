#!/usr/bin/env python3
"""Tiny stdlib-only helpers for with-servers.sh.

  probe.py port-free PORT       exit 0 if 127.0.0.1:PORT can be bound
  probe.py free-port            print a free loopback TCP port
  probe.py kafka HOST PORT      exit 0 if Kafka Metadata lists a live broker and
                                an active controller and a group coordinator is up
  probe.py mongo HOST PORT      exit 0 if a MongoDB OP_MSG {ping: 1} answers ok: 1

Each probe makes one attempt with a short timeout; the caller loops.
"""
import socket
import struct
import sys

TIMEOUT = 3.0


def port_free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Like the servers do: a port whose old connections linger in TIME_WAIT is free.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return buf


# ---------------------------------------------------------------- Kafka --

class Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take(">h")
        if n < 0:
            return None
        v = self.buf[self.pos:self.pos + n].decode()
        self.pos += n
        return v


def kafka_request(sock, api_key, api_version, correlation_id, body):
    client_id = b"with-servers-probe"
    req = struct.pack(">hhih", api_key, api_version, correlation_id, len(client_id)) + client_id + body
    sock.sendall(struct.pack(">i", len(req)) + req)
    size = struct.unpack(">i", recv_exact(sock, 4))[0]
    r = Reader(recv_exact(sock, size))
    if r.take(">i") != correlation_id:
        raise ValueError("bad correlation id")
    return r


def kafka(host, port):
    """Ready = Metadata v1 lists a live broker and an active controller, and
    FindCoordinator v0 finds a group coordinator (the first call makes the
    broker create __consumer_offsets, so consumers never wait for it later)."""
    with socket.create_connection((host, port), timeout=TIMEOUT) as s:
        s.settimeout(TIMEOUT)
        # Metadata v1, empty topic list: brokers + controller only.
        r = kafka_request(s, 3, 1, 1, struct.pack(">i", 0))
        brokers = []
        for _ in range(r.take(">i")):
            node_id = r.take(">i")
            bhost = r.string()
            bport = r.take(">i")
            r.string()  # rack
            brokers.append((node_id, bhost, bport))
        controller_id = r.take(">i")
        if not brokers:
            raise ValueError("no live broker in metadata yet")
        if controller_id < 0:
            raise ValueError("no active controller yet")
        # FindCoordinator v0 for a consumer group.
        group = b"with-servers-probe"
        r = kafka_request(s, 10, 0, 2, struct.pack(">h", len(group)) + group)
        err = r.take(">h")
        if err != 0:
            raise ValueError("group coordinator not available yet (error %d)" % err)
    return "brokers=%s controller=%d coordinator ok" % (brokers, controller_id)


# -------------------------------------------------------------- MongoDB --

def bson_cstring(s):
    return s.encode() + b"\x00"


def bson_doc(elements):
    body = b"".join(elements) + b"\x00"
    return struct.pack("<i", len(body) + 4) + body


def bson_int32(name, v):
    return b"\x10" + bson_cstring(name) + struct.pack("<i", v)


def bson_string(name, v):
    data = v.encode() + b"\x00"
    return b"\x02" + bson_cstring(name) + struct.pack("<i", len(data)) + data


def bson_top_level(doc):
    """Decode the scalar top-level fields we care about; skip the rest."""
    out = {}
    pos = 4
    end = struct.unpack_from("<i", doc, 0)[0] - 1
    while pos < end:
        t = doc[pos]
        pos += 1
        nul = doc.index(b"\x00", pos)
        name = doc[pos:nul].decode()
        pos = nul + 1
        if t == 0x01:
            out[name] = struct.unpack_from("<d", doc, pos)[0]; pos += 8
        elif t == 0x10:
            out[name] = struct.unpack_from("<i", doc, pos)[0]; pos += 4
        elif t in (0x12, 0x09, 0x11):
            out[name] = struct.unpack_from("<q", doc, pos)[0]; pos += 8
        elif t == 0x08:
            out[name] = doc[pos] == 1; pos += 1
        elif t in (0x02, 0x0D, 0x0E):
            n = struct.unpack_from("<i", doc, pos)[0]
            out[name] = doc[pos + 4:pos + 4 + n - 1].decode(errors="replace"); pos += 4 + n
        elif t in (0x03, 0x04):
            pos += struct.unpack_from("<i", doc, pos)[0]
        elif t == 0x05:
            pos += 4 + 1 + struct.unpack_from("<i", doc, pos)[0]
        elif t == 0x07:
            pos += 12
        elif t in (0x0A, 0x06, 0xFF, 0x7F):
            pass
        elif t == 0x13:
            pos += 16
        else:
            break  # unknown type: stop, we only need "ok"
    return out


def mongo(host, port):
    request_id = 4242
    doc = bson_doc([bson_int32("ping", 1), bson_string("$db", "admin")])
    body = struct.pack("<I", 0) + b"\x00" + doc  # flagBits, section kind 0
    msg = struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body
    with socket.create_connection((host, port), timeout=TIMEOUT) as s:
        s.settimeout(TIMEOUT)
        s.sendall(msg)
        length, _, response_to, opcode = struct.unpack("<iiii", recv_exact(s, 16))
        payload = recv_exact(s, length - 16)
    if opcode != 2013 or response_to != request_id:
        raise ValueError("unexpected reply opcode=%d responseTo=%d" % (opcode, response_to))
    if payload[4] != 0:
        raise ValueError("unexpected section kind %d" % payload[4])
    reply = bson_top_level(payload[5:])
    if reply.get("ok") != 1:
        raise ValueError("ping not ok: %r" % reply)
    return "ping ok"


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    try:
        if cmd == "port-free":
            return 0 if port_free(int(argv[2])) else 1
        if cmd == "free-port":
            print(free_port())
            return 0
        if cmd == "kafka":
            print(kafka(argv[2], int(argv[3])))
            return 0
        if cmd == "mongo":
            print(mongo(argv[2], int(argv[3])))
            return 0
    except (OSError, ValueError, struct.error, IndexError, ConnectionError) as e:
        print("%s probe: %s" % (cmd, e), file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

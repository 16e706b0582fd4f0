import socket,sys
s=socket.create_connection(("127.0.0.1",18473))
s.sendall(sys.argv[1].encode().decode('unicode_escape').encode('latin1'))
s.settimeout(3); b=b""
try:
  while b"\r\n\r\n" not in b:
    d=s.recv(4096)
    if not d: break
    b+=d
except Exception as e: pass
h=b.split(b"\r\n\r\n")[0].decode('latin1').split("\r\n")
print(h[0],"|"," ".join(x for x in h if x.lower().startswith("x-ratelimit-rem")))

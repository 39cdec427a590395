#!/usr/bin/env python3
"""A Leasewatch lock API client using only the standard library (urllib, threading).

Same discipline as the TypeScript library's withLease:
- renew every ttl/3 on a heartbeat thread;
- the moment the lease is known lost (renew refused, or no successful renew before the
  local deadline), `lost` is set and the work must stop;
- release in `finally`.

Usage as a module:

    client = LeaseClient(os.environ["LEASEWATCH_API"], os.environ["LEASEWATCH_TOKEN"])
    def work(lease):
        while not lease.lost.is_set():
            do_a_step(fencing_token=lease.fencing_token)
    client.with_lease("demo:report:2026-04", "worker-7", "run-1", ttl_ms=10_000, work=work)

As a script (prints one JSON line per event, e.g. for tests):

    python3 lease.py --resource demo:x --owner w1 --task t --ttl-ms 3000 --hold-s 5
"""
import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


class LeaseApiError(Exception):
    def __init__(self, status, problem):
        super().__init__(f"{status} {problem.get('type', '')}: {problem.get('detail', '')}")
        self.status = status
        self.problem = problem


class Lease:
    def __init__(self, body):
        self.handle = body["leaseId"]
        self.store = body["store"]
        self.resource = body["resource"]
        self.fencing_token = body["fencingToken"]
        self.ttl_ms = body["ttlMs"]
        self.lost = threading.Event()
        self.renewals = 0


class LeaseClient:
    def __init__(self, base_url, token, timeout_s=5.0):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s

    def _call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            try:
                problem = json.loads(error.read() or b"{}")
            except ValueError:
                problem = {}
            raise LeaseApiError(error.code, problem) from None

    def acquire(self, resource, owner_id, task, ttl_ms, wait_ms=0, store=None, idempotency_key=None):
        body = {"resource": resource, "ownerId": owner_id, "task": task, "ttlMs": ttl_ms, "waitMs": wait_ms}
        if store:
            body["store"] = store
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        result = self._call("POST", "/v1/locks/acquire", body, headers)
        return Lease(result) if result.get("acquired") else None

    def renew(self, lease):
        return self._call("POST", "/v1/locks/" + urllib.parse.quote(lease.handle, safe="") + "/renew", {"ttlMs": lease.ttl_ms})

    def release(self, lease):
        return self._call("DELETE", "/v1/locks/" + urllib.parse.quote(lease.handle, safe=""))

    def _heartbeat(self, lease, stop, on_event):
        interval_s = lease.ttl_ms / 3000.0
        # The local deadline is measured from before the request that set it was sent, on
        # the monotonic clock: the lease cannot outlive it on the server.
        deadline = lease.acquired_at + lease.ttl_ms / 1000.0
        while not stop.wait(interval_s):
            sent = time.monotonic()
            try:
                self.renew(lease)
                lease.renewals += 1
                deadline = sent + lease.ttl_ms / 1000.0
                on_event({"event": "renewed", "renewals": lease.renewals})
            except LeaseApiError as error:
                if error.status == 409 or error.status == 404:
                    lease.lost.set()
                    on_event({"event": "lost", "reason": error.problem.get("reason", error.problem.get("type"))})
                    return
            except OSError:
                pass  # transient: keep trying until the deadline
            if time.monotonic() >= deadline:
                lease.lost.set()
                on_event({"event": "lost", "reason": "deadline_passed"})
                return

    def with_lease(self, resource, owner_id, task, ttl_ms, work, wait_ms=0, store=None, on_event=lambda e: None):
        started = time.monotonic()
        lease = self.acquire(resource, owner_id, task, ttl_ms, wait_ms=wait_ms, store=store)
        if lease is None:
            raise LeaseApiError(409, {"type": "not-acquired", "detail": f"{resource} is held by someone else"})
        lease.acquired_at = started
        on_event({"event": "acquired", "fencingToken": lease.fencing_token, "store": lease.store, "leaseId": lease.handle})
        stop = threading.Event()
        heartbeat = threading.Thread(target=self._heartbeat, args=(lease, stop, on_event), daemon=True)
        heartbeat.start()
        try:
            return work(lease)
        finally:
            stop.set()
            heartbeat.join()
            if not lease.lost.is_set():
                try:
                    self.release(lease)
                    on_event({"event": "released"})
                except LeaseApiError as error:
                    on_event({"event": "release_failed", "status": error.status})


def main():
    parser = argparse.ArgumentParser(description="Hold a Leasewatch lease for a while, renewing it.")
    parser.add_argument("--resource", required=True)
    parser.add_argument("--owner", required=True)
    parser.add_argument("--task", required=True)
    parser.add_argument("--ttl-ms", type=int, default=10_000)
    parser.add_argument("--hold-s", type=float, default=5.0)
    parser.add_argument("--store")
    args = parser.parse_args()

    def emit(event):
        print(json.dumps(event), flush=True)

    def work(lease):
        # Stop as soon as the lease is lost: Event.wait returns True then.
        if lease.lost.wait(args.hold_s):
            emit({"event": "work_stopped"})
        else:
            emit({"event": "work_done"})

    client = LeaseClient(os.environ["LEASEWATCH_API"], os.environ["LEASEWATCH_TOKEN"])
    try:
        client.with_lease(args.resource, args.owner, args.task, args.ttl_ms, work, store=args.store, on_event=emit)
    except LeaseApiError as error:
        emit({"event": "error", "status": error.status, "detail": str(error)})
        sys.exit(1)


if __name__ == "__main__":
    main()

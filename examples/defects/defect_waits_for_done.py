#!/usr/bin/env python3
"""Defect: waits for a `data: [DONE]` that never comes.

The good gateway (gateway.py) finalises a stream that ends at the HTTP
level after its `finish_reason` chunk, without `[DONE]`, at once. This one
keeps waiting for the terminator until its 30 s attempt deadline before it
hands the (complete) answer to the client. Everything else is gateway.py's
behaviour.

Expected: `fail` on `no-done`, nothing else.
"""

import time

import gateway


class WaitsForDone(gateway.Gateway):
    def wait_for_done(self, started):
        time.sleep(max(0.0, gateway.ATTEMPT_DEADLINE_S - (time.monotonic() - started)))


if __name__ == "__main__":
    gateway.main(WaitsForDone, __doc__.splitlines()[0])

#!/usr/bin/env python3
"""Defect: never fails over on a mid-stream cut; passes the broken stream on.

The good gateway (gateway.py) treats a stream whose connection breaks
before `[DONE]` as a failure and fails over. This one keeps the chunks it
got and ends the client's stream with `data: [DONE]`, as if the answer were
whole. A stall (a read that times out) still fails over; a plain JSON body
cut off still fails over. Everything else is gateway.py's behaviour.

Expected: `fail` on `stream-cut` and on `prefill-rejected` (whose primary
stream is cut the same way), nothing else.
"""

import gateway


class MasksStreamCut(gateway.Gateway):
    def stream_complete(self, saw_done, saw_finish, cut):
        return cut or super().stream_complete(saw_done, saw_finish, cut)


if __name__ == "__main__":
    gateway.main(MasksStreamCut, __doc__.splitlines()[0])

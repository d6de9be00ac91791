#!/usr/bin/env python3
"""Defect: retries a 429 at once, many times, ignoring Retry-After.

The good gateway (gateway.py) retries a 429 once, after waiting out its
Retry-After, and fails over at once on a 429 without one. This one retries
the same route immediately up to 8 times (9 attempts) whatever the header
says, then fails over. Everything else is gateway.py's behaviour.

Expected: `fail` on `429-retry-after` (a second attempt before Retry-After)
and on `429-persistent` (more than 4 attempts in 3 s, more than 6 in all),
nothing else (`429` still ends on the fallback).
"""

import gateway


class RetryStorm429(gateway.Gateway):
    def retry_delays(self, result):
        if result.status == 429:
            return [0.0] * 8
        return super().retry_delays(result)


if __name__ == "__main__":
    gateway.main(RetryStorm429, __doc__.splitlines()[0])

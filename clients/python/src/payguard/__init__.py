"""payguard's in-process guard for x402 agents (Python): the payment rules of the payguard proxy, decided in the
official x402 client's before-payment-creation hook before anything is signed, and offline receipt
verification. See README.md."""

from .decide import decide_challenge
from .guard import Decision, Guard, PaymentRefused, fee_guard, guard
from .receipt import RECEIPT_TYPE, Claims, ReceiptError, verify_jws, verify_receipt
from .rules import Rules, normalize_rules
from .usd import format_usd, parse_usd

__version__ = "0.1.0"
__all__ = [
    "Claims", "Decision", "Guard", "PaymentRefused", "RECEIPT_TYPE", "ReceiptError", "Rules", "decide_challenge", "fee_guard",
    "format_usd", "guard", "normalize_rules", "parse_usd", "verify_jws", "verify_receipt",
]

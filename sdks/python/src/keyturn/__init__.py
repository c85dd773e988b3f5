"""Keyturn for Python: check license tokens, license files, signed answers and webhooks offline, and call the
Keyturn API (activate, validate, heartbeat, usage, tokens, deactivate) with retries; a license guard that
keeps working offline; activation request files and deactivation codes for air-gapped machines."""

from ._client import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS, Client
from ._errors import (
    ApiError,
    KeyturnConnectionError,
    KeyturnError,
    LicenseFileError,
    SignatureError,
    TokenError,
    WebhookError,
)
from ._fingerprint import machine_fingerprint, machine_id
from ._guard import (
    DEFAULT_GUARD_CLOCK_TOLERANCE_SECONDS,
    DEFAULT_GUARD_GRACE_PERIOD,
    GuardLicense,
    LicenseGuard,
    LicenseGuardResult,
    LicenseGuardStateChange,
)
from ._keys import PublicKey, PublicKeys
from ._offline_activation import InvalidOptionError, create_activation_request, create_deactivation_code
from ._license_files import MAX_LICENSE_FILE_LENGTH, LicenseFileResult, canonical_license_key, verify_license_file
from ._signed_answers import answer_signature_base, new_nonce, verify_signed_answer
from ._storage import FileStorage, GuardStorage, user_data_directory
from ._time import Instant
from ._tokens import MAX_LICENSE_TOKEN_LENGTH, OfflineValidationResult, validate_license_token
from ._webhooks import WEBHOOK_TOLERANCE_SECONDS, verify_webhook

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_GUARD_CLOCK_TOLERANCE_SECONDS",
    "DEFAULT_GUARD_GRACE_PERIOD",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_LICENSE_FILE_LENGTH",
    "MAX_LICENSE_TOKEN_LENGTH",
    "WEBHOOK_TOLERANCE_SECONDS",
    "ApiError",
    "Client",
    "FileStorage",
    "GuardLicense",
    "GuardStorage",
    "InvalidOptionError",
    "Instant",
    "KeyturnConnectionError",
    "KeyturnError",
    "LicenseFileError",
    "LicenseFileResult",
    "LicenseGuard",
    "LicenseGuardResult",
    "LicenseGuardStateChange",
    "OfflineValidationResult",
    "PublicKey",
    "PublicKeys",
    "SignatureError",
    "TokenError",
    "WebhookError",
    "answer_signature_base",
    "canonical_license_key",
    "create_activation_request",
    "create_deactivation_code",
    "machine_fingerprint",
    "machine_id",
    "new_nonce",
    "user_data_directory",
    "validate_license_token",
    "verify_license_file",
    "verify_signed_answer",
    "verify_webhook",
]

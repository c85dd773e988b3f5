package keyturn

// EncodeActivationRequest writes a request file with a fixed nonce and time, for the conformance
// vectors (tests only).
func EncodeActivationRequest(licenseKey, productID, fingerprint, name, platform, nonce, created string) string {
	return encodeActivationRequest(licenseKey, activationRequestFields{productID, fingerprint, name, platform, nonce, created})
}

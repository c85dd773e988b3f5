package keyturn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
)

// MachineFingerprint is HMAC-SHA256 keyed by an application's salt over the machine's id, in
// lowercase hex. The salt keeps the raw machine id private and differs per application.
func MachineFingerprint(salt, machineID string) string {
	mac := hmac.New(sha256.New, []byte(salt))
	mac.Write([]byte(machineID))
	return hex.EncodeToString(mac.Sum(nil))
}

// ThisMachineFingerprint is MachineFingerprint(salt, MachineID()).
func ThisMachineFingerprint(salt string) (string, error) {
	id, err := MachineID()
	if err != nil {
		return "", err
	}
	return MachineFingerprint(salt, id), nil
}

var (
	platformUUID = regexp.MustCompile(`"IOPlatformUUID"\s*=\s*"([^"]+)"`)
	machineGUID  = regexp.MustCompile(`MachineGuid\s+REG_SZ\s+(\S+)`)
)

// MachineID is this machine's stable id: /etc/machine-id (Linux and BSDs), IOPlatformUUID (macOS),
// MachineGuid (Windows).
func MachineID() (string, error) {
	switch runtime.GOOS {
	case "darwin":
		output, err := exec.Command("ioreg", "-rd1", "-c", "IOPlatformExpertDevice").Output()
		if err != nil {
			return "", err
		}
		if m := platformUUID.FindSubmatch(output); m != nil {
			return string(m[1]), nil
		}
		return "", errors.New("keyturn: IOPlatformUUID not found")
	case "windows":
		output, err := exec.Command("reg", "query", `HKLM\SOFTWARE\Microsoft\Cryptography`, "/v", "MachineGuid").Output()
		if err != nil {
			return "", err
		}
		if m := machineGUID.FindSubmatch(output); m != nil {
			return string(m[1]), nil
		}
		return "", errors.New("keyturn: MachineGuid not found")
	}
	for _, path := range []string{"/etc/machine-id", "/var/lib/dbus/machine-id"} {
		if data, err := os.ReadFile(path); err == nil {
			if id := strings.TrimSpace(string(data)); id != "" {
				return id, nil
			}
		}
	}
	return "", errors.New("keyturn: no machine id found (/etc/machine-id)")
}

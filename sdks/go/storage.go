package keyturn

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// maxStoredLength bounds what a store read returns: a guard's proof is a few kilobytes.
const maxStoredLength = 256 << 10

// GuardStorage is where the license guard keeps its last good proof; values are opaque strings.
type GuardStorage interface {
	// Get returns the value and true, or false when there is none.
	Get(key string) (string, bool, error)
	Set(key, value string) error
	// Delete removes the value; no value is not an error.
	Delete(key string) error
}

// DefaultGuardDirectory is the folder FileStorage uses by default: "keyturn" in the per-user
// configuration folder (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux,
// ~/Library/Application Support on macOS, %AppData% on Windows).
func DefaultGuardDirectory() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "keyturn"), nil
}

// FileStorage keeps each value in its own file in Dir, readable only by this user (a 0700 folder,
// 0600 files). A write goes to a temporary file in the same folder, flushed to disk, then renamed
// over the old one: a reader sees the old value or the new one, never half of one.
type FileStorage struct {
	Dir string
}

// Path is the file of key: named by the first 32 hex digits of its SHA-256, so any key makes a
// safe file name and the name says nothing about the license.
func (s FileStorage) Path(key string) (string, error) {
	if key == "" {
		return "", errors.New("keyturn: a storage key is a non-empty string")
	}
	if s.Dir == "" {
		return "", errors.New("keyturn: FileStorage needs a Dir")
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:])[:32]+".store"), nil
}

// Get reads the value of key; a value over 256 KiB is not read (false).
func (s FileStorage) Get(key string) (string, bool, error) {
	path, err := s.Path(key)
	if err != nil {
		return "", false, err
	}
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxStoredLength+1))
	if err != nil {
		return "", false, err
	}
	if len(data) > maxStoredLength {
		return "", false, nil
	}
	return string(data), true, nil
}

// Set writes the value of key atomically.
func (s FileStorage) Set(key, value string) (err error) {
	path, err := s.Path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	temporary, err := os.CreateTemp(s.Dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(temporary.Name())
		}
	}()
	// CreateTemp makes the file 0600 already; Chmod in case a platform differs.
	if err := temporary.Chmod(0o600); err != nil {
		temporary.Close()
		return err
	}
	if _, err := temporary.WriteString(value); err != nil {
		temporary.Close()
		return err
	}
	if err := temporary.Sync(); err != nil {
		temporary.Close()
		return err
	}
	if err := temporary.Close(); err != nil {
		return err
	}
	return os.Rename(temporary.Name(), path)
}

// Delete removes the value of key.
func (s FileStorage) Delete(key string) error {
	path, err := s.Path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// AutoTLS makes what a broker serves TLS with (sluice broker --tls auto)
// in dir: a CA (ca.pem, its key ca-key.pem), made once and kept, so that
// workers and clients that trust it keep trusting the broker across
// restarts; and a server certificate (server.pem, server-key.pem), made
// anew each time, signed by the CA, for the listen addresses (every
// interface's address for 0.0.0.0 or ::), the host's name and the
// loopback names. Keys are ECDSA P-256, written 0600. It returns the
// broker's TLS files (no CA: clients are not asked for certificates) and
// the CA file workers and clients give as --tls-ca.
func AutoTLS(dir string, listen []string) (TLSFiles, string, error) {
	if dir == "" {
		return TLSFiles{}, "", errors.New("--tls auto: expected a directory for its CA and certificate (--tls-dir DIR or --store DIR), found none")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return TLSFiles{}, "", fmt.Errorf("--tls auto: %w", err)
	}
	caFile, caKeyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	ca, caKey, err := loadCA(caFile, caKeyFile)
	if errors.Is(err, os.ErrNotExist) {
		ca, caKey, err = makeCA(caFile, caKeyFile)
	}
	if err != nil {
		return TLSFiles{}, "", fmt.Errorf("--tls auto: %w", err)
	}
	ips, names := certNames(listen)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return TLSFiles{}, "", fmt.Errorf("--tls auto: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return TLSFiles{}, "", fmt.Errorf("--tls auto: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "sluice broker"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		IPAddresses: ips, DNSNames: names, KeyUsage: x509.KeyUsageDigitalSignature,
		// ClientAuth too: the broker presents it to a parent and to itself.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return TLSFiles{}, "", fmt.Errorf("--tls auto: signing the broker's certificate: %w", err)
	}
	files := TLSFiles{Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server-key.pem")}
	if err := writeKey(files.Key, key); err != nil {
		return TLSFiles{}, "", err
	}
	if err := writePEM(files.Cert, "CERTIFICATE", der, 0o644); err != nil {
		return TLSFiles{}, "", err
	}
	return files, caFile, nil
}

// certNames are the SANs of the broker's certificate.
func certNames(listen []string) ([]net.IP, []string) {
	ips := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	names := []string{"localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		names = append(names, h)
	}
	addIP := func(ip net.IP) {
		for _, have := range ips {
			if have.Equal(ip) {
				return
			}
		}
		ips = append(ips, ip)
	}
	for _, l := range listen {
		host := l
		if h, _, err := net.SplitHostPort(l); err == nil {
			host = h
		}
		ip := net.ParseIP(strings.Trim(host, "[]"))
		switch {
		case host == "" || ip != nil && ip.IsUnspecified():
			addrs, _ := net.InterfaceAddrs()
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					addIP(n.IP)
				}
			}
		case ip != nil:
			addIP(ip)
		default:
			if !strings.EqualFold(host, "localhost") {
				names = append(names, host)
			}
		}
	}
	return ips, names
}

func loadCA(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	cp, _ := pem.Decode(cb)
	kp, _ := pem.Decode(kb)
	if cp == nil || kp == nil {
		return nil, nil, fmt.Errorf("%s or %s: expected PEM, found something else (remove both to make a new CA)", certFile, keyFile)
	}
	ca, err := x509.ParseCertificate(cp.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certFile, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kp.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || !key.PublicKey.Equal(ca.PublicKey) {
		return nil, nil, fmt.Errorf("%s: expected the ECDSA key of %s, found another key", keyFile, certFile)
	}
	if time.Now().After(ca.NotAfter) {
		return nil, nil, fmt.Errorf("%s expired on %s: remove it and %s to make a new CA (then give workers and clients the new one)", certFile, ca.NotAfter.Format(time.DateOnly), keyFile)
	}
	return ca, key, nil
}

func makeCA(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, nil, err
	}
	host, _ := os.Hostname()
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "sluice broker CA " + host},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		MaxPathLenZero: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	if err := writeKey(keyFile, key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	return ca, key, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// writePEM replaces path with one PEM block, by a rename so that a reader
// never sees half a file.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return fmt.Errorf("--tls auto: %w", err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("--tls auto: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("--tls auto: %w", err)
	}
	return nil
}

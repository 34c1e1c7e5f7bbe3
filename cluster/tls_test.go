package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/device"
)

// writeCerts writes a CA and a server certificate for 127.0.0.1 (PEM).
func writeCerts(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", srvDER), write("server-key.pem", "EC PRIVATE KEY", keyDER)
}

func TestTLS(t *testing.T) {
	ca, cert, key := writeCerts(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := StartBroker(ctx, BrokerOptions{Name: "tls", Listen: "127.0.0.1:0", TLS: TLSFiles{Cert: cert, Key: key},
		Auth: &Auth{Users: []User{{User: "c", Password: "t0ken", Role: RoleAdmin}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	// Without the CA the client does not trust the broker.
	if c, err := Connect(ctx, b.ClientURL(), Credentials{User: "c", Password: "t0ken"}); err == nil {
		c.Close()
		t.Fatal("connected over TLS without trusting the broker's CA")
	}
	good := Credentials{User: "c", Password: "t0ken", TLS: TLSFiles{CA: ca}}
	w, err := StartWorker(ctx, WorkerOptions{Broker: b.ClientURL(), Creds: good, Name: "w1", Devices: []device.Info{testCPU}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, err := Connect(ctx, b.ClientURL(), good)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Worker(ctx, "w1"); err != nil {
		t.Fatalf("worker over TLS: %v", err)
	}
	// The right CA but a wrong password is still refused.
	if c2, err := Connect(ctx, b.ClientURL(), Credentials{User: "c", Password: "nope", TLS: TLSFiles{CA: ca}}); err == nil {
		c2.Close()
		t.Fatal("connected with a wrong token")
	}
}

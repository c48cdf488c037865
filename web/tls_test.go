package web_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/simvis/simvis/ipc"
	"github.com/simvis/simvis/web"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their files and the pool that trusts it.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "simvis test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return cert, key, pool
}

// With a certificate the page is https:// and its WebSocket wss://: a
// client that trusts the certificate connects with its token, plain HTTP
// gets no page, and a certificate without its key is refused at start.
func TestTLS(t *testing.T) {
	sceneFile := quickstart(t)
	region := filepath.Join(t.TempDir(), "region")
	startHost(t, region, sceneFile, 30)
	cert, key, pool := selfSigned(t)
	s := listen(t, region, web.Options{TLSCert: cert, TLSKey: key, DriverToken: "drive"})
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("URL %s, want https://", s.URL())
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	resp, err := hc.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", s.URL(), resp.Status)
	}
	if r, err := http.Get(strings.Replace(s.URL(), "https://", "http://", 1)); err == nil {
		r.Body.Close()
		if r.StatusCode == http.StatusOK {
			t.Error("plain HTTP got the page from a TLS server")
		}
	}
	ws := strings.Replace(s.URL(), "https://", "wss://", 1) + "ws?token=drive"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: hc, Subprotocols: []string{"simvis.web.v1"}})
	if err != nil {
		t.Fatalf("wss: %v", err)
	}
	defer conn.CloseNow()
	if _, msg, err := conn.Read(ctx); err != nil || !strings.Contains(string(msg), `"role":"driver"`) {
		t.Errorf("welcome over wss: %s %v", msg, err)
	}
	if _, err := web.Listen(web.Options{Addr: "127.0.0.1:0", Dial: func() (*ipc.Client, error) { return ipc.Open(region) }, TLSCert: cert}); err == nil {
		t.Error("a certificate without its key was accepted")
	}
}

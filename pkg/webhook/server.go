package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// NewHandler returns the webhook's mux: admission on naming.WebhookValidatePath and naming.WebhookMutatePath,
// everything else (health, readiness, metrics) from other.
func NewHandler(admission *Admission, other http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(naming.WebhookValidatePath, admission.ServeValidate)
	mux.HandleFunc(naming.WebhookMutatePath, admission.ServeMutate)
	mux.Handle("/", other)
	return mux
}

// ServeTLS serves handler over TLS on l with the certificate getCertificate returns at each handshake, until ctx is
// done. It then stops accepting connections and waits up to gracePeriod for the requests in flight to finish
// before it closes the rest.
func ServeTLS(ctx context.Context, l net.Listener, handler http.Handler, getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error), gracePeriod time.Duration) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		// The API server's admission timeout is at most 30s.
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 35 * time.Second,
		IdleTimeout:  90 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: getCertificate,
		},
	}
	shutdownDone := make(chan error, 1)
	go func() {
		<-ctx.Done()
		klog.InfoS("Shutting down the webhook server", "gracePeriod", gracePeriod)
		shutdownCtx, cancel := context.WithTimeout(context.Background(), gracePeriod)
		defer cancel()
		err := srv.Shutdown(shutdownCtx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.Join(fmt.Errorf("requests still in flight after the grace period of %v were cut off", gracePeriod), srv.Close())
		}
		shutdownDone <- err
	}()
	klog.InfoS("Serving the webhook", "address", l.Addr().String())
	if err := srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("can't serve on %q: %w", l.Addr().String(), err)
	}
	return <-shutdownDone
}

// Package imagebuild writes the dispatcher's container image as an OCI
// image layout in one tar file (`make image`), with no container engine and
// no registry: one layer holding the statically linked binary and the CA
// bundle, on no base image (scratch), so no shell or package is inside.
// The layer's files carry a fixed time and owner, so the same binary gives
// the same digest.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Media types of the OCI image spec.
const (
	MediaIndex    = "application/vnd.oci.image.index.v1+json"
	MediaManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaConfig   = "application/vnd.oci.image.config.v1+json"
	MediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// Paths inside the image.
const (
	BinaryPath = "dispatcher"
	CAPath     = "etc/ssl/certs/ca-certificates.crt"
	// User is the non-root user and group the entrypoint runs as
	// (distroless's "nonroot").
	User = "65532:65532"
)

// epoch stamps every file and the config, so builds are reproducible.
var epoch = time.Unix(0, 0).UTC()

// Options name the inputs of one image.
type Options struct {
	Binary  string // the dispatcher, built with CGO_ENABLED=0
	CACerts string // a PEM bundle of root certificates
	Version string // the release version, also the image's ref name
	Arch    string // GOARCH of Binary
	Source  string // the repository's URL, for the source label
}

// Descriptor points at one blob.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Index is an OCI image index (the layout's index.json).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// ContainerConfig is the part of the image config a runtime executes.
type ContainerConfig struct {
	Entrypoint []string          `json:"Entrypoint"`
	User       string            `json:"User"`
	Env        []string          `json:"Env,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
}

// Config is an OCI image config.
type Config struct {
	Created      time.Time       `json:"created"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       ContainerConfig `json:"config"`
	RootFS       struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// Build writes the image to w as an OCI layout tar and returns the
// manifest's digest (what a registry pins).
func Build(w io.Writer, o Options) (string, error) {
	if o.Version == "" || o.Arch == "" {
		return "", fmt.Errorf("imagebuild: version and arch are required")
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return "", fmt.Errorf("imagebuild: binary: %w", err)
	}
	ca, err := os.ReadFile(o.CACerts)
	if err != nil {
		return "", fmt.Errorf("imagebuild: CA certificates: %w", err)
	}
	layerTar, err := layer(bin, ca)
	if err != nil {
		return "", err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(layerTar); err != nil {
		return "", fmt.Errorf("imagebuild: compress layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("imagebuild: compress layer: %w", err)
	}
	cfg := Config{Created: epoch, Architecture: o.Arch, OS: "linux", Config: ContainerConfig{
		Entrypoint: []string{"/" + BinaryPath},
		User:       User,
		Env:        []string{"SSL_CERT_FILE=/" + CAPath},
		Labels: map[string]string{
			"org.opencontainers.image.version": o.Version,
			"org.opencontainers.image.source":  o.Source,
			"org.opencontainers.image.title":   "mention-runner dispatcher",
		},
	}}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{digest(layerTar)}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("imagebuild: config: %w", err)
	}
	man := Manifest{SchemaVersion: 2, MediaType: MediaManifest,
		Config: Descriptor{MediaType: MediaConfig, Digest: digest(cfgJSON), Size: int64(len(cfgJSON))},
		Layers: []Descriptor{{MediaType: MediaLayer, Digest: digest(gz.Bytes()), Size: int64(gz.Len())}}}
	manJSON, err := json.Marshal(man)
	if err != nil {
		return "", fmt.Errorf("imagebuild: manifest: %w", err)
	}
	idx := Index{SchemaVersion: 2, MediaType: MediaIndex, Manifests: []Descriptor{{
		MediaType: MediaManifest, Digest: digest(manJSON), Size: int64(len(manJSON)),
		Annotations: map[string]string{"org.opencontainers.image.ref.name": o.Version}}}}
	idxJSON, err := json.Marshal(idx)
	if err != nil {
		return "", fmt.Errorf("imagebuild: index: %w", err)
	}
	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idxJSON},
		{blobPath(gz.Bytes()), gz.Bytes()},
		{blobPath(cfgJSON), cfgJSON},
		{blobPath(manJSON), manJSON},
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return "", fmt.Errorf("imagebuild: write %s: %w", d, err)
		}
	}
	for _, f := range files {
		if err := writeFile(tw, f.name, 0o644, f.data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", fmt.Errorf("imagebuild: close: %w", err)
	}
	return digest(manJSON), nil
}

// layer is the image's one filesystem layer, uncompressed.
func layer(bin, ca []byte) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, d := range []string{"etc/", "etc/ssl/", "etc/ssl/certs/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, fmt.Errorf("imagebuild: layer %s: %w", d, err)
		}
	}
	if err := writeFile(tw, CAPath, 0o644, ca); err != nil {
		return nil, err
	}
	if err := writeFile(tw, BinaryPath, 0o755, bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("imagebuild: layer: %w", err)
	}
	return b.Bytes(), nil
}

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("imagebuild: write %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("imagebuild: write %s: %w", name, err)
	}
	return nil
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func blobPath(b []byte) string {
	s := sha256.Sum256(b)
	return "blobs/sha256/" + hex.EncodeToString(s[:])
}

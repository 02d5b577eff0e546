package imagebuild_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/devtools/imagebuild"
)

const module = "github.com/mention-runner/mention-runner"

// TestImage builds the image as `make image` does (MR_IMAGE_TAR names a
// tarball `make image` wrote instead, with MR_IMAGE_VERSION its version)
// and reads it as a runtime would: the entrypoint, the non-root user, no
// shell, every blob matching its digest, and the binary inside being this
// version's dispatcher.
func TestImage(t *testing.T) {
	tarPath, version := os.Getenv("MR_IMAGE_TAR"), os.Getenv("MR_IMAGE_VERSION")
	if tarPath == "" {
		tarPath, version = buildImage(t)
	}
	blobs, index := readLayout(t, tarPath)

	require.Len(t, index.Manifests, 1)
	assert.Equal(t, imagebuild.MediaManifest, index.Manifests[0].MediaType)
	assert.Equal(t, version, index.Manifests[0].Annotations["org.opencontainers.image.ref.name"])
	var man imagebuild.Manifest
	require.NoError(t, json.Unmarshal(blob(t, blobs, index.Manifests[0]), &man))
	var cfg imagebuild.Config
	require.NoError(t, json.Unmarshal(blob(t, blobs, man.Config), &cfg))

	assert.Equal(t, []string{"/dispatcher"}, cfg.Config.Entrypoint)
	assert.Equal(t, "65532:65532", cfg.Config.User, "runs as a non-root user and group")
	assert.Equal(t, "linux", cfg.OS)
	assert.Equal(t, version, cfg.Config.Labels["org.opencontainers.image.version"])
	require.Len(t, man.Layers, 1, "one layer on scratch")
	gz := blob(t, blobs, man.Layers[0])
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	layer, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, []string{digestOf(layer)}, cfg.RootFS.DiffIDs)

	files := map[string][]byte{}
	modes := map[string]int64{}
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			require.NoError(t, err)
			files[h.Name], modes[h.Name] = b, h.Mode
		} else {
			assert.Equal(t, byte(tar.TypeDir), h.Typeflag, "%s: only files and directories", h.Name)
		}
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	assert.ElementsMatch(t, []string{"dispatcher", "etc/ssl/certs/ca-certificates.crt"}, names,
		"no shell, no package manager: the binary and the CA bundle only")
	assert.Contains(t, string(files["etc/ssl/certs/ca-certificates.crt"]), "BEGIN CERTIFICATE")
	assert.Equal(t, int64(0o755), modes["dispatcher"])

	bin := filepath.Join(t.TempDir(), "dispatcher")
	require.NoError(t, os.WriteFile(bin, files["dispatcher"], 0o755))
	bi, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	assert.Equal(t, module+"/cmd/dispatcher", bi.Path)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	assert.Equal(t, "0", settings["CGO_ENABLED"], "static: scratch has no libc")
	// -trimpath leaves -ldflags out of the build info: the binary says its
	// version, or (another platform's) carries it.
	if cfg.Architecture == runtime.GOARCH {
		out, err := exec.Command(bin, "version").Output()
		require.NoError(t, err)
		assert.Equal(t, "dispatcher "+version+"\n", string(out))
	} else {
		assert.Contains(t, string(files["dispatcher"]), version)
	}
}

// TestImageReproducible: the same binary gives the same digest, so the
// release's pinned digest can be rebuilt and compared.
func TestImageReproducible(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.WriteFile(bin, []byte("not a real binary"), 0o755))
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644))
	o := imagebuild.Options{Binary: bin, CACerts: ca, Version: "v1.2.3", Arch: "arm64"}
	var a, b bytes.Buffer
	da, err := imagebuild.Build(&a, o)
	require.NoError(t, err)
	db, err := imagebuild.Build(&b, o)
	require.NoError(t, err)
	assert.Equal(t, da, db)
	assert.Equal(t, a.Bytes(), b.Bytes())

	for name, bad := range map[string]imagebuild.Options{
		"no binary":  {Binary: filepath.Join(dir, "missing"), CACerts: ca, Version: "v1", Arch: "amd64"},
		"no CA":      {Binary: bin, CACerts: filepath.Join(dir, "missing"), Version: "v1", Arch: "amd64"},
		"no version": {Binary: bin, CACerts: ca, Arch: "amd64"},
	} {
		_, err := imagebuild.Build(io.Discard, bad)
		assert.Error(t, err, name)
	}
}

func buildImage(t *testing.T) (string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the dispatcher")
	}
	const version = "v0.0.0-imagetest"
	dir := t.TempDir()
	bin := filepath.Join(dir, "dispatcher")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags",
		"-s -w -X "+module+"/internal/core/cli.Version="+version, "-o", bin, module+"/cmd/dispatcher")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	ca := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(ca); err != nil {
		ca = filepath.Join(dir, "ca.pem")
		require.NoError(t, os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644))
	}
	tarPath := filepath.Join(dir, "image.tar")
	f, err := os.Create(tarPath)
	require.NoError(t, err)
	_, err = imagebuild.Build(f, imagebuild.Options{Binary: bin, CACerts: ca, Version: version, Arch: runtime.GOARCH})
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return tarPath, version
}

func readLayout(t *testing.T, path string) (map[string][]byte, imagebuild.Index) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = b
	}
	assert.JSONEq(t, `{"imageLayoutVersion":"1.0.0"}`, string(files["oci-layout"]))
	var idx imagebuild.Index
	require.NoError(t, json.Unmarshal(files["index.json"], &idx))
	return files, idx
}

func blob(t *testing.T, files map[string][]byte, d imagebuild.Descriptor) []byte {
	t.Helper()
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	require.True(t, ok, d.Digest)
	b, ok := files["blobs/sha256/"+hexDigest]
	require.True(t, ok, "blob %s is in the layout", d.Digest)
	assert.Equal(t, d.Digest, digestOf(b))
	assert.Equal(t, d.Size, int64(len(b)))
	return b
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

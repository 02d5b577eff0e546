// Command imagebuild writes the dispatcher's container image as an OCI
// layout tar (`make image`), with no container engine or registry, and
// prints the manifest's digest.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/mention-runner/mention-runner/internal/devtools/imagebuild"
)

func main() {
	var o imagebuild.Options
	out := flag.String("o", "dist/dispatcher-image.tar", "the OCI layout tar to write")
	flag.StringVar(&o.Binary, "binary", "", "the dispatcher, built with CGO_ENABLED=0")
	flag.StringVar(&o.CACerts, "ca", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of root certificates to include")
	flag.StringVar(&o.Version, "version", "dev", "the version the binary carries")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "GOARCH of the binary")
	flag.StringVar(&o.Source, "source", "https://github.com/mention-runner/mention-runner", "source label")
	flag.Parse()
	if err := run(*out, o); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(out string, o imagebuild.Options) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	d, err := imagebuild.Build(f, o)
	if err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Println(d)
	return nil
}

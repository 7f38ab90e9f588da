// Command ferretdb-server runs an embedded FerretDB (MongoDB wire protocol)
// with the SQLite backend, for local integration tests only.
//
// Usage: ferretdb-server -listen 127.0.0.1:27018 -state /path/to/dir
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27018", "TCP address to listen on")
	stateDir := flag.String("state", "", "directory for SQLite databases (required)")
	logLevel := flag.String("log-level", "warn", "log level: debug, info, warn, error")
	flag.Parse()

	if *stateDir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb-server: -state is required")
		os.Exit(2)
	}

	dir, err := filepath.Abs(*stateDir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: state dir: %v\n", err)
		os.Exit(1)
	}

	var level slog.Level
	if err = level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: bad -log-level: %v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/", // SQLite backend wants a directory URI ending with '/'
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	// MongoDBURI blocks until the listener is bound.
	fmt.Fprintf(os.Stderr, "ferretdb-server: listening, uri=%s state=%s\n", f.MongoDBURI(), dir)

	if err = <-done; err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb-server: %v\n", err)
		os.Exit(1)
	}
}

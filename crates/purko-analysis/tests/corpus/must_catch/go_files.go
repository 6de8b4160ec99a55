package main

import (
	"archive/zip"
	"io/ioutil"
	"net/http"
	"os"
	"path/filepath"
)

func files(r *http.Request) {
	os.Mkdir("/srv/data", 0777)                                // expect: G301
	os.MkdirAll("/srv/data/cache", 0755)                       // expect: G301
	os.Chmod("/srv/data/app.conf", 0666)                       // expect: G302
	f, _ := os.OpenFile("/srv/log", os.O_CREATE|os.O_WRONLY, 0644) // expect: G302
	_ = f
	os.WriteFile("/srv/out.txt", []byte("x"), 0644)      // expect: G306
	ioutil.WriteFile("/tmp/report.txt", []byte("x"), 0600) // expect: G303
	tmp, _ := os.Create("/tmp/cache.db")                  // expect: G303
	_ = tmp
	name := r.URL.Query().Get("file")
	data, _ := os.ReadFile(name) // expect: G304
	_ = data
	g, _ := os.Open(filepath.Join("/srv", name)) // expect: G304
	_ = g
	clean, _ := os.Open(filepath.Clean(name))
	_ = clean
	http.Handle("/", http.FileServer(http.Dir("/"))) // expect: G111
}

func unzip(archive, dest string) error {
	reader, err := zip.OpenReader(archive)
	if err != nil {
		return err
	}
	for _, f := range reader.File {
		path := filepath.Join(dest, f.Name) // expect: G305
		_ = path
	}
	return nil
}

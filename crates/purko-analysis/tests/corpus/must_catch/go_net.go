package main

import (
	"database/sql"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // expect: G108
	"unsafe"
)

func serve(db *sql.DB, user string, url string) {
	net.Listen("tcp", "0.0.0.0:8080") // expect: G102
	net.Listen("tcp", ":9090")        // expect: G102
	net.Listen("tcp", "127.0.0.1:9090")
	http.ListenAndServe(":8080", nil) // expect: G114
	server := &http.Server{Addr: ":8443"} // expect: G112
	_ = server
	good := &http.Server{Addr: ":8443", ReadHeaderTimeout: 5}
	_ = good
	resp, _ := http.Get(url) // expect: G107
	_ = resp
	http.Get("https://example.org/fixed")
	rows, _ := db.Query(fmt.Sprintf("SELECT * FROM users WHERE name = '%s'", user)) // expect: G201
	_ = rows
	rows, _ = db.Query("SELECT * FROM users WHERE name = '" + user + "'") // expect: G202
	var x int64
	p := unsafe.Pointer(&x) // expect: G103
	_ = p
}

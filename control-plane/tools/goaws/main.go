// goaws (github.com/Admiral-Piett/goaws), an SQS-compatible server, served
// on loopback only: goaws's own command listens on every address, so this
// main wires the same router and periodic tasks to 127.0.0.1 and the port
// of its configuration (-config, environment "Local").
package main

import (
	"flag"
	"net/http"
	"os"
	"time"

	"github.com/Admiral-Piett/goaws/app/conf"
	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/router"
	log "github.com/sirupsen/logrus"
)

func main() {
	var filename string
	flag.StringVar(&filename, "config", "", "config file")
	flag.Parse()
	log.SetOutput(os.Stderr)
	log.SetLevel(log.WarnLevel)
	ports := conf.LoadYamlConfig(filename, "Local")
	quit := make(chan struct{})
	go gosqs.PeriodicTasks(1*time.Second, quit)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+ports[0], router.New()))
}

/*
 * A one-broker librdkafka mock cluster on loopback, the Kafka protocol peer
 * that tests/golden/capture/capture_all.sh records real clients against.
 *
 * librdkafka's mock broker is written independently of produce-proxy, so its
 * responses (and the requests real clients send it) are trustworthy golden
 * bytes. One broker keeps every client on one port, which is all the capture
 * filter has to watch.
 *
 * Prints the bootstrap list ("127.0.0.1:PORT") on stdout, then serves until
 * stdin reaches EOF (the capture script holds a pipe open and closes it to
 * stop us). Not part of the CMake build:
 *   cc -O1 -o mock_cluster mock_cluster.c -lrdkafka
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
        const char *topic = argc > 1 ? argv[1] : "golden";
        int partitions    = argc > 2 ? atoi(argv[2]) : 2;
        char errstr[512];
        char buf[256];

        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        /* The host handle only does book-keeping for the mock; it has no
         * bootstrap.servers, so it never connects anywhere itself. */
        if (rd_kafka_conf_set(conf, "client.id", "golden-mock-host", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "mock_cluster: %s\n", errstr);
                return 1;
        }
        rd_kafka_t *rk =
            rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "mock_cluster: rd_kafka_new: %s\n", errstr);
                return 1;
        }

        rd_kafka_mock_cluster_t *mcluster = rd_kafka_mock_cluster_new(rk, 1);
        if (!mcluster) {
                fprintf(stderr, "mock_cluster: cluster_new failed\n");
                rd_kafka_destroy(rk);
                return 1;
        }
        rd_kafka_resp_err_t err =
            rd_kafka_mock_topic_create(mcluster, topic, partitions, 1);
        if (err) {
                fprintf(stderr, "mock_cluster: topic_create: %s\n",
                        rd_kafka_err2str(err));
                return 1;
        }

        printf("%s\n", rd_kafka_mock_cluster_bootstraps(mcluster));
        fflush(stdout);

        /* Serve until our controller closes stdin. */
        while (fgets(buf, sizeof(buf), stdin))
                ;

        rd_kafka_mock_cluster_destroy(mcluster);
        rd_kafka_destroy(rk);
        return 0;
}

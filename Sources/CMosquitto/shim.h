#ifndef VITRINE_CMOSQUITTO_SHIM_H
#define VITRINE_CMOSQUITTO_SHIM_H
/*
 * libmosquitto 2.0 (Debian bookworm, Raspberry Pi OS). The player drives it from its own epoll loop: no
 * mosquitto_loop_start thread. The callbacks are registered here so Swift hands over one context pointer and
 * collects what happened after each mosquitto_loop_* call; only VitrineRuntime's MQTTSession calls these.
 */
#include <mosquitto.h>
/* MQTT 5's property identifiers and reason codes (the maximum packet size asked for at CONNECT). */
#include <mqtt_protocol.h>
#include <stddef.h>

/* What the callbacks report, in the order they came. */
typedef void (*vitrine_mqtt_connect_fn)(void *context, int code);
typedef void (*vitrine_mqtt_disconnect_fn)(void *context, int code);
/* `retained`: the broker kept this message and sent it because the client subscribed, not because it was just sent. */
typedef void (*vitrine_mqtt_message_fn)(void *context, const char *topic, const void *payload, int length,
                                        int retained);

struct vitrine_mqtt_sink {
    void *context;
    vitrine_mqtt_connect_fn connected;
    vitrine_mqtt_disconnect_fn disconnected;
    vitrine_mqtt_message_fn message;
};

static void vitrine_mqtt_on_connect(struct mosquitto *mosq, void *object, int code) {
    (void)mosq;
    struct vitrine_mqtt_sink *sink = object;
    sink->connected(sink->context, code);
}

static void vitrine_mqtt_on_disconnect(struct mosquitto *mosq, void *object, int code) {
    (void)mosq;
    struct vitrine_mqtt_sink *sink = object;
    sink->disconnected(sink->context, code);
}

static void vitrine_mqtt_on_message(struct mosquitto *mosq, void *object, const struct mosquitto_message *message) {
    (void)mosq;
    struct vitrine_mqtt_sink *sink = object;
    sink->message(sink->context, message->topic, message->payload, message->payloadlen, message->retain ? 1 : 0);
}

/* A client whose callbacks go to `sink` (which must outlive it); NULL with errno set when it cannot be made. */
static inline struct mosquitto *vitrine_mqtt_new(const char *client_id, struct vitrine_mqtt_sink *sink) {
    struct mosquitto *mosq = mosquitto_new(client_id, true, sink);
    if (mosq == NULL) return NULL;
    mosquitto_connect_callback_set(mosq, vitrine_mqtt_on_connect);
    mosquitto_disconnect_callback_set(mosq, vitrine_mqtt_on_disconnect);
    mosquitto_message_callback_set(mosq, vitrine_mqtt_on_message);
    return mosq;
}

#endif

#ifndef VITRINE_CCEC_SHIM_H
#define VITRINE_CCEC_SHIM_H
/*
 * The kernel's HDMI-CEC API (linux/cec.h, Documentation/userspace-api/media/cec): ioctls on /dev/cecN, whose
 * request numbers are _IOWR macros Swift does not import. The descriptor is non-blocking: transmits return at once
 * and their results come back through CEC_RECEIVE (a message with its sequence number and tx_status), claiming
 * the logical address finishes later with a CEC_EVENT_STATE_CHANGE. Each wrapper returns 0, or -1 with errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/cec.h>

static inline int vitrine_cec_open(const char *path) { return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC); }

static inline int vitrine_cec_caps(int fd, struct cec_caps *caps) { return ioctl(fd, CEC_ADAP_G_CAPS, caps); }

static inline int vitrine_cec_physical_address(int fd, __u16 *address) {
    return ioctl(fd, CEC_ADAP_G_PHYS_ADDR, address);
}

/* The DRM card and connector the adapter sits on (kernels 5.5 and later, and drivers that tell): 1 when known,
 * 0 when not, -1 with errno on failure. */
static inline int vitrine_cec_drm_connector(int fd, __u32 *card, __u32 *connector) {
    struct cec_connector_info info;
    memset(&info, 0, sizeof info);
    if (ioctl(fd, CEC_ADAP_G_CONNECTOR_INFO, &info) != 0) return errno == ENOTTY || errno == EINVAL ? 0 : -1;
    if (info.type != CEC_CONNECTOR_TYPE_DRM) return 0;
    *card = info.drm.card_no;
    *connector = info.drm.connector_id;
    return 1;
}

/* Sends and receives, and takes every message (the core messages too: the player answers them itself). */
static inline int vitrine_cec_take_bus(int fd) {
    __u32 mode = CEC_MODE_INITIATOR | CEC_MODE_EXCL_FOLLOWER_PASSTHRU;
    return ioctl(fd, CEC_S_MODE, &mode);
}

/* Claims one Playback Device logical address named `name` (CEC 1.4, no vendor id), after clearing what an earlier
 * run left configured (the kernel refuses a new claim over an old one). Falls back to Unregistered when all three
 * playback addresses are taken, so the player can still send. */
static inline int vitrine_cec_claim_playback(int fd, const char *name) {
    struct cec_log_addrs addresses;
    memset(&addresses, 0, sizeof addresses);
    if (ioctl(fd, CEC_ADAP_S_LOG_ADDRS, &addresses) != 0) return -1;
    addresses.cec_version = CEC_OP_CEC_VERSION_1_4;
    addresses.num_log_addrs = 1;
    addresses.vendor_id = CEC_VENDOR_ID_NONE;
    addresses.flags = CEC_LOG_ADDRS_FL_ALLOW_UNREG_FALLBACK;
    strncpy(addresses.osd_name, name, sizeof addresses.osd_name - 1);
    addresses.primary_device_type[0] = CEC_OP_PRIM_DEVTYPE_PLAYBACK;
    addresses.log_addr_type[0] = CEC_LOG_ADDR_TYPE_PLAYBACK;
    addresses.all_device_types[0] = CEC_OP_ALL_DEVTYPE_PLAYBACK;
    return ioctl(fd, CEC_ADAP_S_LOG_ADDRS, &addresses);
}

/* The claimed logical address: 0 to 14, 15 when every playback address was taken and the adapter fell back to
 * Unregistered, or 255 while none is configured (cleared, or the claim still running). */
static inline int vitrine_cec_logical_address(int fd, __u8 *logical) {
    struct cec_log_addrs addresses;
    memset(&addresses, 0, sizeof addresses);
    if (ioctl(fd, CEC_ADAP_G_LOG_ADDRS, &addresses) != 0) return -1;
    *logical = addresses.num_log_addrs > 0 ? addresses.log_addr[0] : 255;
    return 0;
}

/* Queues `length` bytes (header, opcode, operands) for sending; the outcome arrives later with `*sequence`. */
static inline int vitrine_cec_transmit(int fd, const __u8 *bytes, __u32 length, __u32 *sequence) {
    struct cec_msg message;
    memset(&message, 0, sizeof message);
    if (length < 1 || length > CEC_MAX_MSG_SIZE) {
        errno = EINVAL;
        return -1;
    }
    memcpy(message.msg, bytes, length);
    message.len = length;
    if (ioctl(fd, CEC_TRANSMIT, &message) != 0) return -1;
    *sequence = message.sequence;
    return 0;
}

/* One received message or transmit result: `*length` bytes into `bytes` (16), its sequence (0 for a message from
 * the bus) and tx_status. -1 with EAGAIN when there is none. */
static inline int vitrine_cec_receive(int fd, __u8 *bytes, __u32 *length, __u32 *sequence, __u8 *tx_status) {
    struct cec_msg message;
    memset(&message, 0, sizeof message);
    if (ioctl(fd, CEC_RECEIVE, &message) != 0) return -1;
    *length = message.len > CEC_MAX_MSG_SIZE ? CEC_MAX_MSG_SIZE : message.len;
    memcpy(bytes, message.msg, *length);
    *sequence = message.sequence;
    *tx_status = message.tx_status;
    return 0;
}

static inline int vitrine_cec_tx_ok(__u8 tx_status) { return (tx_status & CEC_TX_STATUS_OK) != 0; }

/* One event: a state change gives the physical address and the claimed addresses' mask. -1 with EAGAIN when
 * there is none. */
static inline int vitrine_cec_event(int fd, __u32 *event, __u16 *physical, __u16 *mask) {
    struct cec_event happened;
    memset(&happened, 0, sizeof happened);
    if (ioctl(fd, CEC_DQEVENT, &happened) != 0) return -1;
    *event = happened.event;
    *physical = happened.state_change.phys_addr;
    *mask = happened.state_change.log_addr_mask;
    return 0;
}

static const __u32 VITRINE_CEC_EVENT_STATE_CHANGE = CEC_EVENT_STATE_CHANGE;

/* For `vitrine probe`, blocking for at most a few seconds: asks the TV its power status (0 on, 1 standby, 2 and 3
 * in transition) through `path`, claiming a playback address first when the adapter has none (and giving it up
 * after). With a running player on the adapter, its address is used. Returns 0, or -1 with errno (ENONET: no
 * address, the cable is out; EIO or ETIMEDOUT: the TV did not answer). */
static inline int vitrine_cec_ask_tv_power(const char *path, const char *name, __u8 *status) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    struct cec_log_addrs addresses;
    memset(&addresses, 0, sizeof addresses);
    int claimed_here = 0;
    int result = -1;
    if (ioctl(fd, CEC_ADAP_G_LOG_ADDRS, &addresses) != 0) goto done;
    if (addresses.num_log_addrs == 0) {
        if (vitrine_cec_claim_playback(fd, name) != 0) goto done;
        claimed_here = 1;
        if (ioctl(fd, CEC_ADAP_G_LOG_ADDRS, &addresses) != 0) goto done;
    }
    if (addresses.log_addr[0] == CEC_LOG_ADDR_TV) {
        /* The adapter is a TV's own (an HDMI input): there is no other TV to ask. */
        errno = EISCONN;
        goto done;
    }
    if (addresses.log_addr_mask == 0 && addresses.log_addr[0] != CEC_LOG_ADDR_UNREGISTERED) {
        errno = ENONET;
        goto done;
    }
    struct cec_msg message;
    memset(&message, 0, sizeof message);
    message.msg[0] = (__u8)(addresses.log_addr[0] << 4 | CEC_LOG_ADDR_TV);
    message.msg[1] = CEC_MSG_GIVE_DEVICE_POWER_STATUS;
    message.len = 2;
    message.reply = CEC_MSG_REPORT_POWER_STATUS;
    message.timeout = 1000;
    if (ioctl(fd, CEC_TRANSMIT, &message) != 0) goto done;
    if (!(message.tx_status & CEC_TX_STATUS_OK)) {
        errno = EIO;
        goto done;
    }
    if (!(message.rx_status & CEC_RX_STATUS_OK) || message.len < 3) {
        errno = ETIMEDOUT;
        goto done;
    }
    *status = message.msg[2];
    result = 0;
done:;
    int saved = errno;
    if (claimed_here) {
        struct cec_log_addrs none;
        memset(&none, 0, sizeof none);
        ioctl(fd, CEC_ADAP_S_LOG_ADDRS, &none);
    }
    close(fd);
    errno = saved;
    return result;
}

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * failnic: a NIC for hlctl's VM tests that refuses on demand.
 *
 * Debian 12's kernel is built without netdevsim, and the real drivers in the
 * test guest refuse only a few settings. This module registers one Ethernet
 * device, `fail0`, with rings, coalescing, pause, channels, changeable
 * features, an MTU range and link modes, and makes the N-th setting request
 * fail with a chosen errno:
 *
 *   echo 16 > /sys/module/failnic/parameters/fail_errno   # EBUSY
 *   echo 3  > /sys/module/failnic/parameters/fail_in      # the 3rd request
 *
 * Every request that changes a setting counts (ring, coalesce, pause,
 * channels, features, MTU, link); the one that brings `fail_in` to 0
 * fails, the others succeed. Rings and coalescing refuse with an extended
 * ack ("failnic: refused on purpose"); the others have none to give.
 * All of these run under the RTNL lock, so the count needs no lock of its own.
 * Frames sent are dropped; nothing is ever received.
 */
#include <linux/ethtool.h>
#include <linux/etherdevice.h>
#include <linux/linkmode.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>

static int fail_in;
module_param(fail_in, int, 0644);
MODULE_PARM_DESC(fail_in, "the N-th setting request from now fails (1: the next); 0: none");

static int fail_errno = EBUSY;
module_param(fail_errno, int, 0644);
MODULE_PARM_DESC(fail_errno, "the errno of the refused request (positive)");

#define FAILNIC_QUEUES 4
#define FAILNIC_RING_MAX 4096

struct failnic {
	struct ethtool_ringparam ring;
	struct ethtool_coalesce coal;
	struct ethtool_pauseparam pause;
	u32 combined;
	u8 autoneg;
	u32 speed;
	u8 duplex;
	__ETHTOOL_DECLARE_LINK_MODE_MASK(advertising);
};

static struct net_device *failnic_dev;

/* 0, or the refusal of this request when it is the one asked for. */
static int failnic_refuse(struct netlink_ext_ack *extack)
{
	if (fail_in <= 0 || --fail_in > 0)
		return 0;
	NL_SET_ERR_MSG(extack, "failnic: refused on purpose");
	return -fail_errno;
}

static netdev_tx_t failnic_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev->stats.tx_packets++;
	dev->stats.tx_bytes += skb->len;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static int failnic_open(struct net_device *dev)
{
	netif_carrier_on(dev);
	netif_tx_start_all_queues(dev);
	return 0;
}

static int failnic_stop(struct net_device *dev)
{
	netif_tx_stop_all_queues(dev);
	netif_carrier_off(dev);
	return 0;
}

static int failnic_change_mtu(struct net_device *dev, int mtu)
{
	int err = failnic_refuse(NULL);

	if (err)
		return err;
	dev->mtu = mtu;
	return 0;
}

static int failnic_set_features(struct net_device *dev, netdev_features_t features)
{
	return failnic_refuse(NULL);
}

static const struct net_device_ops failnic_netdev_ops = {
	.ndo_open = failnic_open,
	.ndo_stop = failnic_stop,
	.ndo_start_xmit = failnic_xmit,
	.ndo_change_mtu = failnic_change_mtu,
	.ndo_set_features = failnic_set_features,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

static void failnic_get_ringparam(struct net_device *dev, struct ethtool_ringparam *ring,
				  struct kernel_ethtool_ringparam *kring,
				  struct netlink_ext_ack *extack)
{
	struct failnic *fn = netdev_priv(dev);

	*ring = fn->ring;
}

static int failnic_set_ringparam(struct net_device *dev, struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct failnic *fn = netdev_priv(dev);
	int err = failnic_refuse(extack);

	if (err)
		return err;
	fn->ring.rx_pending = ring->rx_pending;
	fn->ring.tx_pending = ring->tx_pending;
	return 0;
}

static int failnic_get_coalesce(struct net_device *dev, struct ethtool_coalesce *c,
				struct kernel_ethtool_coalesce *kc,
				struct netlink_ext_ack *extack)
{
	struct failnic *fn = netdev_priv(dev);

	*c = fn->coal;
	return 0;
}

static int failnic_set_coalesce(struct net_device *dev, struct ethtool_coalesce *c,
				struct kernel_ethtool_coalesce *kc,
				struct netlink_ext_ack *extack)
{
	struct failnic *fn = netdev_priv(dev);
	int err = failnic_refuse(extack);

	if (err)
		return err;
	fn->coal.rx_coalesce_usecs = c->rx_coalesce_usecs;
	fn->coal.rx_max_coalesced_frames = c->rx_max_coalesced_frames;
	fn->coal.tx_coalesce_usecs = c->tx_coalesce_usecs;
	fn->coal.tx_max_coalesced_frames = c->tx_max_coalesced_frames;
	return 0;
}

static void failnic_get_pauseparam(struct net_device *dev, struct ethtool_pauseparam *p)
{
	struct failnic *fn = netdev_priv(dev);

	*p = fn->pause;
}

static int failnic_set_pauseparam(struct net_device *dev, struct ethtool_pauseparam *p)
{
	struct failnic *fn = netdev_priv(dev);
	int err = failnic_refuse(NULL);

	if (err)
		return err;
	fn->pause.autoneg = p->autoneg;
	fn->pause.rx_pause = p->rx_pause;
	fn->pause.tx_pause = p->tx_pause;
	return 0;
}

static void failnic_get_channels(struct net_device *dev, struct ethtool_channels *ch)
{
	struct failnic *fn = netdev_priv(dev);

	ch->max_combined = FAILNIC_QUEUES;
	ch->combined_count = fn->combined;
}

static int failnic_set_channels(struct net_device *dev, struct ethtool_channels *ch)
{
	struct failnic *fn = netdev_priv(dev);
	int err = failnic_refuse(NULL);

	if (err)
		return err;
	err = netif_set_real_num_queues(dev, ch->combined_count, ch->combined_count);
	if (err)
		return err;
	fn->combined = ch->combined_count;
	return 0;
}

static int failnic_get_link_ksettings(struct net_device *dev,
				      struct ethtool_link_ksettings *ks)
{
	struct failnic *fn = netdev_priv(dev);

	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_add_link_mode(ks, supported, 1000baseT_Full);
	ethtool_link_ksettings_add_link_mode(ks, supported, 10000baseT_Full);
	ethtool_link_ksettings_add_link_mode(ks, supported, Autoneg);
	ethtool_link_ksettings_add_link_mode(ks, supported, TP);
	linkmode_copy(ks->link_modes.advertising, fn->advertising);
	ks->base.autoneg = fn->autoneg;
	ks->base.speed = fn->speed;
	ks->base.duplex = fn->duplex;
	ks->base.port = PORT_TP;
	return 0;
}

static int failnic_set_link_ksettings(struct net_device *dev,
				      const struct ethtool_link_ksettings *ks)
{
	struct failnic *fn = netdev_priv(dev);
	int err = failnic_refuse(NULL);

	if (err)
		return err;
	fn->autoneg = ks->base.autoneg;
	if (fn->autoneg) {
		linkmode_copy(fn->advertising, ks->link_modes.advertising);
		fn->speed = SPEED_10000;
		fn->duplex = DUPLEX_FULL;
	} else {
		fn->speed = ks->base.speed;
		fn->duplex = ks->base.duplex;
	}
	return 0;
}

static const struct ethtool_ops failnic_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_USECS | ETHTOOL_COALESCE_MAX_FRAMES,
	.get_link = ethtool_op_get_link,
	.get_ringparam = failnic_get_ringparam,
	.set_ringparam = failnic_set_ringparam,
	.get_coalesce = failnic_get_coalesce,
	.set_coalesce = failnic_set_coalesce,
	.get_pauseparam = failnic_get_pauseparam,
	.set_pauseparam = failnic_set_pauseparam,
	.get_channels = failnic_get_channels,
	.set_channels = failnic_set_channels,
	.get_link_ksettings = failnic_get_link_ksettings,
	.set_link_ksettings = failnic_set_link_ksettings,
};

static void failnic_defaults(struct failnic *fn)
{
	fn->ring.rx_max_pending = FAILNIC_RING_MAX;
	fn->ring.tx_max_pending = FAILNIC_RING_MAX;
	fn->ring.rx_pending = 256;
	fn->ring.tx_pending = 256;
	fn->coal.rx_coalesce_usecs = 50;
	fn->coal.rx_max_coalesced_frames = 32;
	fn->coal.tx_coalesce_usecs = 50;
	fn->coal.tx_max_coalesced_frames = 32;
	fn->pause.autoneg = 0;
	fn->pause.rx_pause = 1;
	fn->pause.tx_pause = 1;
	fn->combined = 2;
	fn->autoneg = AUTONEG_ENABLE;
	fn->speed = SPEED_10000;
	fn->duplex = DUPLEX_FULL;
	linkmode_zero(fn->advertising);
	linkmode_set_bit(ETHTOOL_LINK_MODE_1000baseT_Full_BIT, fn->advertising);
	linkmode_set_bit(ETHTOOL_LINK_MODE_10000baseT_Full_BIT, fn->advertising);
	linkmode_set_bit(ETHTOOL_LINK_MODE_Autoneg_BIT, fn->advertising);
}

static int __init failnic_init(void)
{
	struct net_device *dev;
	int err;

	dev = alloc_etherdev_mqs(sizeof(struct failnic), FAILNIC_QUEUES, FAILNIC_QUEUES);
	if (!dev)
		return -ENOMEM;
	strscpy(dev->name, "fail%d", IFNAMSIZ);
	eth_hw_addr_random(dev);
	dev->netdev_ops = &failnic_netdev_ops;
	dev->ethtool_ops = &failnic_ethtool_ops;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = 9000;
	dev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_TSO;
	dev->features = dev->hw_features;
	failnic_defaults(netdev_priv(dev));
	netif_set_real_num_tx_queues(dev, 2);
	netif_set_real_num_rx_queues(dev, 2);
	err = register_netdev(dev);
	if (err) {
		free_netdev(dev);
		return err;
	}
	failnic_dev = dev;
	return 0;
}

static void __exit failnic_exit(void)
{
	unregister_netdev(failnic_dev);
	free_netdev(failnic_dev);
}

module_init(failnic_init);
module_exit(failnic_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("A NIC that refuses setting requests on demand, for hlctl's VM tests");
